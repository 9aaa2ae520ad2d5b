// Starts DynamoDB Local bound to 127.0.0.1 only. DynamoDB Local has no option for the bind
// address, so this sets the host of its Jetty connectors before starting it. Reflection only:
// it compiles against the JDK alone (compiled once by local/dynamodb-local.ts, cached by hash).
import java.lang.reflect.Field;

public class LoopbackDynamoDB {
  public static void main(String[] args) throws Exception {
    Class<?> runner = Class.forName("software.amazon.dynamodb.services.local.main.ServerRunner");
    Object proxy = runner.getMethod("createServerFromCommandLineArgs", String[].class).invoke(null, (Object) args);
    Field field = proxy.getClass().getDeclaredField("server");
    field.setAccessible(true);
    Object server = field.get(proxy);
    for (Object connector : (Object[]) server.getClass().getMethod("getConnectors").invoke(server)) {
      connector.getClass().getMethod("setHost", String.class).invoke(connector, "127.0.0.1");
    }
    proxy.getClass().getMethod("start").invoke(proxy);
    proxy.getClass().getMethod("join").invoke(proxy);
  }
}

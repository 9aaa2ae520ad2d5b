/** Test servers on the loopback interface. */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Listens on a free loopback port; returns the port and the server's URL. */
export const listenLocally = async (server: Server): Promise<{ port: number; url: string }> => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { port, url: `http://127.0.0.1:${port}` };
};

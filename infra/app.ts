/** The CDK app: `npm run synth`, `npm run deploy`, `npm run deploy:localstack`. */
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { OnceflowStack } from './onceflow-stack.ts';
import { readSettings } from './settings.ts';

const app = new App();
const settings = readSettings((key) => app.node.tryGetContext(key));
new OnceflowStack(app, `onceflow-${settings.stage}`, {
  settings,
  description: `onceflow (${settings.stage}): order events applied exactly once`,
});
Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }));

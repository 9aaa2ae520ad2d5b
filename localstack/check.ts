/** `npm run test:localstack`: says plainly whether it ran. */
const endpoint = process.env.LOCALSTACK_ENDPOINT;
if (!endpoint) {
  console.log(
    'test:localstack did not run: set LOCALSTACK_ENDPOINT (e.g. http://localhost:4566) after `npm run deploy:localstack`.',
  );
  process.exit(0);
}
console.error(
  `test:localstack: the suite against a deployed stack at ${endpoint} is not written yet; nothing was tested.`,
);
process.exit(1);

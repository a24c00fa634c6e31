// Typed REST client generated from the tsoa spec by `npm run build` into src/client/ (gitignored).
// Function names are the operationIds (getUsers, createUser, mintEmbedToken, …).
/** @type {import('@hey-api/openapi-ts').UserConfig} */
export default {
  input: 'src/http/generated/openapi.json',
  output: { path: 'src/client' },
  plugins: ['@hey-api/client-fetch', '@hey-api/typescript', '@hey-api/sdk'],
};

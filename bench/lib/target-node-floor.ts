// Floor target: the cheapest correct node:http answer, with no bridge and no Web objects at all.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { staticJson } from "./static-json.ts";
import { saveProfile } from "./profile-hook.ts";

// A string body, like the adapter's: node sends head and string body in one write, while a Buffer
// body costs a writev of two chunks, which would make the floor slower than the bridge.
const length = Buffer.byteLength(staticJson);
const server = createServer((_request, response) => {
  response.writeHead(200, { "content-type": "application/json", "content-length": length });
  response.end(staticJson);
});
server.listen(Number(process.env.PORT ?? 0), "127.0.0.1", () => {
  console.log(`listening ${(server.address() as AddressInfo).port}`);
});
process.on("SIGTERM", () => {
  void saveProfile().then(() => {
    server.close();
    server.closeAllConnections();
    process.exit(0);
  });
});

// A Node bot for the sandbox language test: READY, then echo every line.
const rl = require("readline").createInterface({ input: process.stdin });
console.log("READY");
rl.on("line", (l) => console.log("ECHO " + l));

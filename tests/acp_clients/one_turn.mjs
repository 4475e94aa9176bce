// One turn of an ACP agent driven by the TypeScript SDK's client (@agentclientprotocol/sdk's
// ClientSideConnection), for a check of `chimera acp` across implementations.
//
//   node one_turn.mjs CWD ANSWER PROMPT -- AGENT_COMMAND...
//
// It starts AGENT_COMMAND (stdin and stdout for the protocol, stderr passed through), initializes it,
// opens a session in CWD, sends PROMPT and answers every permission question with the option of kind
// ANSWER (allow_once, allow_always, reject_once). Then it closes the agent's stdin, waits for it to end
// and prints one JSON object: initialize's and session/new's answers, every session/update in order,
// each question with the option chosen, the prompt's answer and the agent's exit code. A failure prints
// {"error": ...} and exits 1.
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";

const [cwd, answer, prompt, dashes, ...command] = process.argv.slice(2);
if (dashes !== "--" || command.length === 0) {
  console.error("usage: node one_turn.mjs CWD ANSWER PROMPT -- AGENT_COMMAND...");
  process.exit(2);
}

const agent = spawn(command[0], command.slice(1), { stdio: ["pipe", "pipe", "inherit"] });
const ended = new Promise((resolve) => agent.on("exit", (code, signal) => resolve(code ?? signal)));
const seen = { updates: [], questions: [] };

class Recorder {
  async sessionUpdate(params) {
    seen.updates.push(params.update);
  }

  async requestPermission(params) {
    const option = params.options.find((o) => o.kind === answer);
    const outcome = option
      ? { outcome: "selected", optionId: option.optionId }
      : { outcome: "cancelled" };
    seen.questions.push({ toolCall: params.toolCall, options: params.options, outcome });
    return { outcome };
  }
}

const stream = acp.ndJsonStream(Writable.toWeb(agent.stdin), Readable.toWeb(agent.stdout));
const connection = new acp.ClientSideConnection(() => new Recorder(), stream);

try {
  seen.initialize = await connection.initialize({
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
    clientInfo: { name: "chimera-tests-typescript-sdk", version: "1" },
  });
  seen.session = await connection.newSession({ cwd, mcpServers: [] });
  seen.prompt = await connection.prompt({
    sessionId: seen.session.sessionId,
    prompt: [{ type: "text", text: prompt }],
  });
} catch (error) {
  agent.kill();
  console.log(JSON.stringify({ error: String(error?.message ?? error), ...seen }));
  process.exit(1);
}
agent.stdin.end();
seen.exitCode = await ended;
console.log(JSON.stringify(seen));

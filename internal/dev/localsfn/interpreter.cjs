// The interpreter half of localsfn: runs state machine executions in
// aws-local-stepfunctions (an Amazon States Language interpreter) for the
// Go server that started this process.
//
// Protocol, one JSON object per line:
//   Go -> stdin:  {"op":"start","id":execArn,"definition":"...","input":<json>,"context":{...},"skipWaits":bool}
//                 {"op":"result","call":n,"output":<json>}  or  {"op":"result","call":n,"error":{"name":..,"cause":..}}
//   fd 3  -> Go:  {"op":"task","id":execArn,"call":n,"state":name,"resource":arn,"input":<json>}
//                 {"op":"done","id":execArn,"status":"SUCCEEDED"|"FAILED"|"TIMED_OUT","output":<json>,"error":..,"cause":..}
// stdout and stderr are free for diagnostics.
"use strict";
const fs = require("node:fs");
const path = require("node:path");
const readline = require("node:readline");
const { createRequire } = require("node:module");

if (!Promise.withResolvers) {
  // aws-local-stepfunctions 3 expects Node 22; this is its one missing piece on Node 20.
  Promise.withResolvers = function () {
    let resolve, reject;
    const promise = new Promise((res, rej) => { resolve = res; reject = rej; });
    return { promise, resolve, reject };
  };
}

const requireFrom = createRequire(path.join(process.env.LOCALSFN_PROJECT_DIR, "package.json"));
const { StateMachine, ExecutionError, ExecutionTimeoutError } = requireFrom("aws-local-stepfunctions");

const out = fs.createWriteStream(null, { fd: 3 });
function send(msg) { out.write(JSON.stringify(msg) + "\n"); }

const machines = new Map(); // definition text -> StateMachine
let nextCall = 0;
const pending = new Map(); // call -> {resolve, reject}

// Every Task state's name -> its Resource, through Parallel branches and Map
// iterators (aws-local-stepfunctions routes local handlers by state name).
function collect(states, tasks, retries, waits) {
  for (const [name, st] of Object.entries(states || {})) {
    if (st.Type === "Task" && !(name in tasks)) tasks[name] = st.Resource;
    if (st.Retry) retries[name] = 0;
    if (st.Type === "Wait") waits[name] = 0;
    for (const b of st.Branches || []) collect(b.States, tasks, retries, waits);
    const it = st.ItemProcessor || st.Iterator;
    if (it) collect(it.States, tasks, retries, waits);
  }
}

async function start(msg) {
  const finish = (res) => send({ op: "done", id: msg.id, ...res });
  try {
    const definition = JSON.parse(msg.definition);
    const tasks = {}, retries = {}, waits = {};
    collect(definition.States, tasks, retries, waits);
    const handlers = {};
    for (const [state, resource] of Object.entries(tasks)) {
      handlers[state] = (input) => new Promise((resolve, reject) => {
        const call = ++nextCall;
        pending.set(call, { resolve, reject });
        send({ op: "task", id: msg.id, call, state, resource, input });
      });
    }
    const overrides = { taskResourceLocalHandlers: handlers };
    if (msg.skipWaits) {
      overrides.retryIntervalOverrides = retries;
      overrides.waitTimeOverrides = waits;
    }
    // Validating a definition compiles a JSON schema: once per definition.
    let sm = machines.get(msg.definition);
    if (!sm) {
      sm = new StateMachine(definition, { validationOptions: { checkArn: true, checkPaths: true } });
      machines.set(msg.definition, sm);
    }
    const output = await sm.run(msg.input, { overrides, context: msg.context }).result;
    finish({ status: "SUCCEEDED", output: output === undefined ? null : output });
  } catch (e) {
    if (e instanceof ExecutionTimeoutError) {
      finish({ status: "TIMED_OUT", error: "States.Timeout", cause: "The execution timed out" });
    } else if (e instanceof ExecutionError && e.cause) {
      finish({ status: "FAILED", error: e.cause.name, cause: String(e.cause.message ?? "") });
    } else {
      finish({ status: "FAILED", error: "States.Runtime", cause: String(e && e.message ? e.message : e) });
    }
  }
}

const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
rl.on("line", (line) => {
  if (!line.trim()) return;
  const msg = JSON.parse(line);
  if (msg.op === "start") {
    start(msg);
  } else if (msg.op === "result") {
    const p = pending.get(msg.call);
    if (!p) return;
    pending.delete(msg.call);
    if (msg.error) {
      const err = new Error(msg.error.cause ?? "");
      err.name = msg.error.name;
      p.reject(err);
    } else {
      p.resolve(msg.output === undefined ? null : msg.output);
    }
  }
});
rl.on("close", () => process.exit(0));
send({ op: "ready" });

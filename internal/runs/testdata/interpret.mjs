// Runs the run state machine in aws-local-stepfunctions (an Amazon States
// Language interpreter), routing its Task states to the runner served by the
// Go test at RUNNER_URL. Prints {"status": "SUCCEEDED"|"FAILED", ...}.
if (!Promise.withResolvers) {
  // aws-local-stepfunctions 3 expects Node 22; this is its one missing piece on Node 20.
  Promise.withResolvers = function () {
    let resolve, reject;
    const promise = new Promise((res, rej) => { resolve = res; reject = rej; });
    return { promise, resolve, reject };
  };
}
const { StateMachine } = await import("aws-local-stepfunctions");

const definition = JSON.parse(process.env.DEFINITION);
const input = JSON.parse(process.env.INPUT);

async function runner(payload) {
  const res = await fetch(process.env.RUNNER_URL, { method: "POST", body: JSON.stringify(payload) });
  const text = await res.text();
  if (!res.ok) {
    const err = new Error(text);
    err.name = "States.TaskFailed";
    throw err;
  }
  return JSON.parse(text);
}

const sm = new StateMachine(definition, { validationOptions: { checkArn: true } });
try {
  const output = await sm.run(input, {
    overrides: { taskResourceLocalHandlers: { Execute: runner, MarkFailed: runner }, retryIntervalOverrides: { Execute: 0, MarkFailed: 0 } },
  }).result;
  console.log(JSON.stringify({ status: "SUCCEEDED", output }));
} catch (e) {
  console.log(JSON.stringify({ status: "FAILED", error: e.name, cause: String(e.message ?? e.cause ?? "") }));
}

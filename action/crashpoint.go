package action

// crashPoint is called at each step of a multi-step action, after the step is recorded. It does
// nothing in rangekeeper; a binary built with the crashtest tag (only the crash tests build one)
// kills itself with SIGKILL at the step named by RANGEKEEPER_CRASH_AT ("<action>:<step prefix>").
var crashPoint = func(action, step string) {}

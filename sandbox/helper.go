package sandbox

// HelperCommand is the hidden subcommand that runs RunHelper: the program
// calls RunHelper when its first argument is this, before anything else.
const HelperCommand = "sandbox-exec"

package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"
)

// completionCommand prints a shell completion script. bash and zsh ask the
// binary itself what comes next (urfave/cli's --generate-bash-completion:
// commands, then flags after a "-"); fish gets urfave/cli's static script
// made from the command tree.
func completionCommand() *cli.Command {
	return &cli.Command{
		Name:      "completion",
		Usage:     "print a shell completion script (bash, zsh or fish)",
		ArgsUsage: "bash|zsh|fish",
		Description: "bash:  source <(mcp-hub completion bash)     (or save it in /etc/bash_completion.d/mcp-hub)\n" +
			"zsh:   source <(mcp-hub completion zsh)      (after compinit)\n" +
			"fish:  mcp-hub completion fish > ~/.config/fish/completions/mcp-hub.fish",
		Action: func(c *cli.Context) error {
			shell := c.Args().First()
			var script string
			switch shell {
			case "bash":
				script = bashCompletion
			case "zsh":
				script = zshCompletion
			case "fish":
				s, err := c.App.ToFishCompletion()
				if err != nil {
					return fmt.Errorf("completion fish: %w", err)
				}
				script = s
			default:
				return cli.Exit(fmt.Sprintf("completion: name a shell: bash, zsh or fish (got %q)", shell), exitConfig)
			}
			_, err := fmt.Fprint(c.App.Writer, strings.ReplaceAll(script, "PROG", c.App.Name))
			return err
		},
	}
}

// bashCompletion is urfave/cli v2's autocomplete/bash_autocomplete with the
// program name filled in.
const bashCompletion = `# bash completion for PROG: source <(PROG completion bash)
_PROG_init_completion() {
  COMPREPLY=()
  _get_comp_words_by_ref "$@" cur prev words cword
}

_PROG_bash_autocomplete() {
  if [[ "${COMP_WORDS[0]}" != "source" ]]; then
    local cur opts base words
    COMPREPLY=()
    cur="${COMP_WORDS[COMP_CWORD]}"
    if declare -F _init_completion >/dev/null 2>&1; then
      _init_completion -n "=:" || return
    else
      _PROG_init_completion -n "=:" || return
    fi
    words=("${words[@]:0:$cword}")
    if [[ "$cur" == "-"* ]]; then
      requestComp="${words[*]} ${cur} --generate-bash-completion"
    else
      requestComp="${words[*]} --generate-bash-completion"
    fi
    opts=$(eval "${requestComp}" 2>/dev/null)
    COMPREPLY=($(compgen -W "${opts}" -- ${cur}))
    return 0
  fi
}

complete -o bashdefault -o default -o nospace -F _PROG_bash_autocomplete PROG
`

// zshCompletion is urfave/cli v2's autocomplete/zsh_autocomplete with the
// program name filled in.
const zshCompletion = `#compdef PROG
# zsh completion for PROG: source <(PROG completion zsh)

_PROG_zsh_autocomplete() {
  local -a opts
  local cur
  cur=${words[-1]}
  if [[ "$cur" == "-"* ]]; then
    opts=("${(@f)$(${words[@]:0:#words[@]-1} ${cur} --generate-bash-completion)}")
  else
    opts=("${(@f)$(${words[@]:0:#words[@]-1} --generate-bash-completion)}")
  fi

  if [[ "${opts[1]}" != "" ]]; then
    _describe 'values' opts
  else
    _files
  fi
}

compdef _PROG_zsh_autocomplete PROG
`

package main

import "github.com/urfave/cli/v2"

func importCommand() *cli.Command {
	return &cli.Command{Name: "import", Action: func(*cli.Context) error { return nil }}
}
func installCommand() *cli.Command {
	return &cli.Command{Name: "install", Action: func(*cli.Context) error { return nil }}
}
func uninstallCommand() *cli.Command {
	return &cli.Command{Name: "uninstall", Action: func(*cli.Context) error { return nil }}
}

/// Every subcommand, in the order `facekit help` lists them. Add one line per command.
enum CommandTable {
    static let all: [any Command.Type] = [
        HelpCommand.self,
        ModelConvertCommand.self,
        ModelInfoCommand.self,
        ModelRunCommand.self,
    ]
}

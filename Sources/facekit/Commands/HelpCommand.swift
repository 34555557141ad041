struct HelpCommand: Command {
    static let about = CommandAbout(["help"], "facekit help", "Show the subcommands.")
    init(arguments: [String]) throws {}
    func run() throws -> Int32 {
        print(HelpCommand.text)
        return 0
    }
    static var text: String {
        var s = "facekit — standalone facial-expression research kiosk\n\nUsage:\n"
        for c in CommandTable.all {
            s += "  " + c.synopsis.padding(toLength: max(c.synopsis.count, 58), withPad: " ", startingAt: 0) + "  " + c.abstract + "\n"
        }
        return s
    }
}

/// Every subcommand, in the order `facekit help` lists them. Add one line per command.
enum CommandTable {
    static let all: [any Command.Type] = [
        HelpCommand.self,
        SessionsListCommand.self,
        SessionsDeleteCommand.self,
        SessionsRecordSyntheticCommand.self,
        ExportCommand.self,
        BenchStorageCommand.self,
        DevicesCommand.self,
        CaptureCommand.self,
        CaptureFeedCommand.self,
        BenchCaptureCommand.self,
        ModelConvertCommand.self,
        ModelInfoCommand.self,
        ModelRunCommand.self,
        BenchModelsCommand.self,
        ProcessCommand.self,
        BenchPipelineCommand.self,
        FuzzCommand.self,
        GPIOInfoCommand.self,
        GPIOMonitorCommand.self,
        GPIOSetCommand.self,
        GPIOLEDCommand.self,
        GPIOPulseCommand.self,
        BenchGPIOCommand.self,
        RunCommand.self,
    ]
}

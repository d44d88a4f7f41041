import ArgumentParser
import FerryPipeline

/// ferry's command line: the root command and its subcommands.
struct Ferry: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ferry",
        abstract: "Import, export, migrate and verify data stores described by YAML models and jobs.",
        discussion: """
            Exit codes: 0 success · 1 a step failed · 2 rejects over budget (step rolled back) · \
            3 verification failed · 64 configuration or usage error (nothing was touched) · \
            65 model diff: a mapping file is needed (the change cannot be inferred) · \
            130 / 143 interrupted by SIGINT / SIGTERM (the running import step was rolled back).

            Diagnostics: --verbose (-v), anywhere before a '--', logs at debug level to standard \
            error; FERRY_LOG_LEVEL=trace|debug|info|notice|warning|error|critical sets the level \
            (default: warning, so a normal run prints no log lines). See docs/architecture.md.
            """,
        version: "0.1.0",
        subcommands: [
            RunCommand.self, PlanCommand.self, ValidateCommand.self, ImportCommand.self, ExportCommand.self,
            MigrateCommand.self,
            CopyCommand.self, CheckCommand.self, UpdateCommand.self, DeleteCommand.self, VerifyCommand.self,
            StoreCommand.self, ModelCommand.self, MappingCommand.self, InitCommand.self,
        ]
    )
}

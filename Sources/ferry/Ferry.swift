import ArgumentParser

@main
struct Ferry: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ferry",
        abstract: "Import, export, migrate and verify data stores described by YAML models and jobs."
    )
}

// revised-ferry: ferry's command line with the wibosco "Revised" app's migration policy,
// registered under the class name its Xcode mapping model gives
// (`CoreDataMigration_Example.Post2ToPost3MigrationPolicy`; the module prefix is optional).
//
//   swift build --package-path samples/coredata-migration
//   samples/coredata-migration/.build/debug/revised-ferry check Snapshots/*.sqlite \
//       --model CoreDataMigration_Example.xcdatamodeld --mappings Mappings --junit out.xml
import FerryCommandLine
import FerryCore

let registry = PolicyRegistry()
registry.register("CoreDataMigration_Example.Post2ToPost3MigrationPolicy") { SectionPerPostPolicy() }
FerryCommandLine.main(registry: registry)

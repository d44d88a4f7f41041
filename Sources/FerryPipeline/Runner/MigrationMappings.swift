import FerryCore

/// Where each version step's mapping comes from: the bundle's mapping file for that step when
/// there is one, else inference (which refuses, with reasons, what it cannot do).
public enum MigrationMappings {
    public static func provider(for bundle: ModelBundle) -> (ObjectModel, ObjectModel) throws -> MappingModel {
        { from, to in
            try MappingLoader().mapping(for: ModelDiff(from: from, to: to), in: bundle)
        }
    }
}

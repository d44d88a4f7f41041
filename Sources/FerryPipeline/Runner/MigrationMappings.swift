import FerryCore

/// Where each version step's mapping comes from: the bundle's mapping file for that step when
/// there is one, else inference (which refuses, with reasons, what it cannot do).
public enum MigrationMappings {
    /// The mapping of each step; `parameters` are the values of `$name` in mapping files'
    /// expressions (`ferry migrate --param`, a job's parameters for its migrate steps).
    public static func provider(for bundle: ModelBundle, parameters: [String: Value] = [:]) -> (ObjectModel, ObjectModel) throws -> MappingModel {
        { from, to in
            try MappingLoader().mapping(for: ModelDiff(from: from, to: to), in: bundle, parameters: parameters)
        }
    }
}

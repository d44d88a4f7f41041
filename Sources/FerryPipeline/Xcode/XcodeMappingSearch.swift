import FerryCore
import Foundation

/// Finds the Xcode mapping model of a version step among the `.xcmappingmodel` packages of
/// some folders, as Core Data finds one among an app's mapping models: the one made for the
/// step's source and destination models.
///
/// Core Data compares entity version hashes; `xcmapping.xml` stores none (Xcode adds them when
/// it compiles the `.cdm`) and Core Data's hash algorithm is not public (COREDATA.md §3.2), so
/// ferry matches the model versions the mapping names (the last component of its
/// `sourcemodelpath` and `destinationmodelpath`). A package naming versions that are not in the
/// bundle (a renamed version folder) is matched structurally: it is used when it translates
/// against the step's models without an error and is the only one that does.
package struct XcodeMappingSearch: Sendable {
    package var folders: [String]

    package init(folders: [String]) {
        self.folders = folders
    }

    /// The folder holding the model package (or YAML bundle) of `bundle`; empty when the bundle
    /// was not read from a file.
    package static func besideModel(_ bundle: ModelBundle) -> [String] {
        guard let file = bundle.location?.file else { return [] }
        return [(file as NSString).deletingLastPathComponent].map { $0.isEmpty ? "." : $0 }
    }

    /// The `.xcmappingmodel` packages of the folders (a folder may itself be one), sorted.
    package func packages() -> [String] {
        var result: [String] = []
        for folder in folders {
            if XcodeMappingReader.isMappingModel(folder) {
                result.append(folder)
                continue
            }
            let entries = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
            for entry in entries.sorted() where (entry as NSString).pathExtension == XcodeMappingReader.packageExtension
            {
                result.append((folder as NSString).appendingPathComponent(entry))
            }
        }
        return result
    }

    /// The translated mapping for the step `source` → `destination` of `bundle`, or nil when no
    /// package is made for it.
    /// - Throws: ``FerryErrors`` when the matching package cannot be read or translated, or when
    ///   several match.
    package func mapping(
        from source: ObjectModel, to destination: ObjectModel, in bundle: ModelBundle
    ) throws -> MappingModel? {
        let reader = XcodeMappingReader()
        var files: [XcodeMappingFile] = []
        var problems: [FerryError] = []
        for package in packages() {
            do {
                files.append(try reader.read(path: package))
            } catch let errors as FerryErrors {
                problems += errors.errors
            }
        }
        let named = files.filter { $0.sourceVersion == source.version && $0.destinationVersion == destination.version }
        if named.count > 1 {
            throw FerryErrors([
                FerryError(
                    .invalidDefinition,
                    "\(named.count) mapping models are made for \(source.version) → \(destination.version): \(named.map { "'\($0.path)'" }.joined(separator: ", ")); keep one",
                    at: InputLocation(file: named[1].path))
            ])
        }
        if let file = named.first { return try file.mappingModel(from: source, to: destination) }
        let versions = Set(bundle.versions.map(\.version))
        let unplaced = files.filter {
            !versions.contains($0.sourceVersion) || !versions.contains($0.destinationVersion)
        }
        let fitting = unplaced.compactMap { try? $0.mappingModel(from: source, to: destination) }
        if fitting.count == 1 { return fitting[0] }
        if fitting.count > 1 {
            throw FerryErrors([
                FerryError(
                    .invalidDefinition,
                    "\(fitting.count) mapping models fit \(source.version) → \(destination.version) and none names those versions: \(fitting.compactMap(\.location?.file).map { "'\($0)'" }.joined(separator: ", ")); keep one",
                    at: fitting[0].location)
            ])
        }
        // A package that cannot be read may be the one made for this step: say so rather than
        // silently inferring.
        if !problems.isEmpty { throw FerryErrors(problems) }
        return nil
    }
}

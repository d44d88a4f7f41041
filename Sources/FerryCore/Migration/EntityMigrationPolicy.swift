import Foundation
import Synchronization

/// Custom migration code for one entity mapping, in the three stages of Core Data's
/// `NSEntityMigrationPolicy`: create destination instances (per source object), create
/// relationships (per destination object), custom validation; plus begin/end hooks.
///
/// Every method has a default that does what the mapping says, so a policy overrides only what it
/// changes. Register policies by name in a ``PolicyRegistry``; a mapping file names them with
/// `policy: Name`.
///
/// Values are read and written by position (``MigrationRow``, positions looked up once per
/// mapping) or by name (dictionaries, Core Data's shape):
///
/// ```swift
/// final class PhoneNormalizer: EntityMigrationPolicy {
///     private var phone: Int?
///     init() {}
///     func begin(mapping: MappingContext, manager: MigrationManager) throws {
///         phone = mapping.destinationColumns.position(of: "phone")
///     }
///     func createDestinationInstances(forSource source: MigrationObject, mapping: MappingContext, manager: MigrationManager) throws {
///         var row = try manager.mappedRow(forSource: source, mapping: mapping)
///         if let phone, let number = row.string(at: phone) { row[phone] = .string(normalize(number)) }
///         try manager.insertDestinationRow(row, forSource: source, mapping: mapping)
///     }
/// }
/// PolicyRegistry.shared.register("PhoneNormalizer") { PhoneNormalizer() }
/// ```
public protocol EntityMigrationPolicy: AnyObject {
    /// Before any object of the mapping is migrated.
    func begin(mapping: MappingContext, manager: MigrationManager) throws
    /// Creates the destination object(s) for one source object. The default inserts one object
    /// with the mapping's values (``MigrationManager/mappedRow(forSource:mapping:)``).
    func createDestinationInstances(
        forSource source: MigrationObject, mapping: MappingContext, manager: MigrationManager) throws
    /// After every source object was processed.
    func endInstanceCreation(mapping: MappingContext, manager: MigrationManager) throws
    /// Sets relationships of one destination object, once every mapping created its objects. The
    /// default does nothing: relationships the mapping describes are already set.
    func createRelationships(
        forDestination destination: MigrationObject, mapping: MappingContext, manager: MigrationManager) throws
    /// After every destination object's relationships were set.
    func endRelationshipCreation(mapping: MappingContext, manager: MigrationManager) throws
    /// A last check of the mapping's objects; throw to fail the migration (nothing is changed).
    func performCustomValidation(mapping: MappingContext, manager: MigrationManager) throws
    /// After everything else.
    func end(mapping: MappingContext, manager: MigrationManager) throws
}

extension EntityMigrationPolicy {
    /// Does nothing by default.
    public func begin(mapping: MappingContext, manager: MigrationManager) throws {}
    /// Inserts one destination object with the mapping's values (the default).
    public func createDestinationInstances(
        forSource source: MigrationObject, mapping: MappingContext, manager: MigrationManager
    ) throws {
        let row = try manager.mappedRow(forSource: source, mapping: mapping)
        try manager.insertDestinationRow(row, forSource: source, mapping: mapping)
    }
    /// Does nothing by default.
    public func endInstanceCreation(mapping: MappingContext, manager: MigrationManager) throws {}
    /// Does nothing by default: the relationships the mapping describes are already set.
    public func createRelationships(
        forDestination destination: MigrationObject, mapping: MappingContext, manager: MigrationManager
    ) throws {}
    /// Does nothing by default.
    public func endRelationshipCreation(mapping: MappingContext, manager: MigrationManager) throws {}
    /// Does nothing by default.
    public func performCustomValidation(mapping: MappingContext, manager: MigrationManager) throws {}
    /// Does nothing by default.
    public func end(mapping: MappingContext, manager: MigrationManager) throws {}
}

/// An object during migration: its entity, primary key (`ferry_pk`) and values by property
/// name (attributes; to-one relationships as the related object's primary key).
///
/// A source object of the row path keeps its selected row: ``row`` reads it by position
/// (positions of ``MappingContext/sourceColumns``), `source["name"]` reads one value by name,
/// and ``values`` makes a dictionary only when it is read.
public struct MigrationObject: Sendable, Hashable {
    /// The object's entity.
    public var entity: String
    /// The object's primary key (`ferry_pk`).
    public var primaryKey: Int64
    /// The values by property name (to-one relationships as the related object's primary key).
    ///
    /// The source objects the row path hands to policies keep their selected row and make this
    /// dictionary only when it is read: `source["name"]` reads one value without it.
    public var values: [String: Value] {
        get {
            switch storage {
            case .dictionary(let values): return values
            case .row(let row): return row.dictionary
            }
        }
        set { storage = .dictionary(newValue) }
    }
    private var storage: Storage

    /// Where the values are: a dictionary, or a row read by position.
    private enum Storage: Sendable {
        case dictionary([String: Value])
        case row(MigrationRow)
    }

    /// An object of `entity` with its primary key and values.
    public init(entity: String, primaryKey: Int64, values: [String: Value]) {
        self.entity = entity
        self.primaryKey = primaryKey
        self.storage = .dictionary(values)
    }

    /// An object of `entity` with its primary key and a row of values.
    public init(entity: String, primaryKey: Int64, row: MigrationRow) {
        self.entity = entity
        self.primaryKey = primaryKey
        self.storage = .row(row)
    }

    /// The value of a property, `.null` when it has none.
    public subscript(name: String) -> Value {
        switch storage {
        case .dictionary(let values): return values[name] ?? .null
        case .row(let row): return row[name]
        }
    }

    /// The values by position (for a source object, at the positions of the mapping's
    /// ``MappingContext/sourceColumns``): the object's own row, or one made of its dictionary
    /// (names in alphabetical order) when it was made from a dictionary.
    public var row: MigrationRow {
        switch storage {
        case .row(let row): return row
        case .dictionary(let values):
            let names = values.keys.sorted()
            return MigrationRow(columns: MigrationColumns(names: names), storage: names.map { values[$0] ?? .null })
        }
    }

    /// Equal entity, key and values.
    public static func == (lhs: MigrationObject, rhs: MigrationObject) -> Bool {
        lhs.entity == rhs.entity && lhs.primaryKey == rhs.primaryKey && lhs.values == rhs.values
    }

    /// Hashes the entity, key and values.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(entity)
        hasher.combine(primaryKey)
        hasher.combine(values)
    }
}

/// What a policy knows about the entity mapping it runs for.
public struct MappingContext: Sendable {
    /// The entity mapping's name (the destination entity's name unless the mapping file names it).
    public var name: String
    /// The source entity; nil for a mapping whose objects start empty.
    public var source: EntityDescription?
    /// The destination entity.
    public var destination: EntityDescription
    /// The model version migrated from.
    public var sourceModel: ObjectModel
    /// The model version migrated to.
    public var destinationModel: ObjectModel
    /// The positions of the source objects' values (``MigrationObject/row``): the source entity's
    /// attributes in model order, then its to-one relationships; empty without a source entity.
    public var sourceColumns: MigrationColumns
    /// The positions of the destination values (``MigrationManager/mappedRow(forSource:mapping:)``,
    /// ``MigrationManager/insertDestinationRow(_:forSource:mapping:)``):
    /// the destination entity's attributes in model order, then its stored to-one keys.
    public var destinationColumns: MigrationColumns
}

/// Creates migration policies by the names mapping files use.
///
/// A user registers policies in their own small executable before running ferry's command line
/// (see `samples/custom-policy/`).
public final class PolicyRegistry: Sendable {
    /// The registered policy factories and stage hooks.
    private struct Entries {
        var factories: [String: @Sendable () -> any EntityMigrationPolicy] = [:]
        var stages: [String: MigrationStageHooks] = [:]
    }

    private let entries = Mutex(Entries())

    /// The registry ferry's command line uses.
    public static let shared = PolicyRegistry()

    /// An empty registry (ferry's command line uses `shared` unless given another).
    public init() {}

    /// Registers a policy factory under a name (replacing an earlier one).
    public func register(_ name: String, _ factory: @escaping @Sendable () -> any EntityMigrationPolicy) {
        entries.withLock { $0.factories[name] = factory }
    }

    /// Registers hooks run around one version step, like SwiftData's
    /// `MigrationStage.custom(fromVersion:toVersion:willMigrate:didMigrate:)`.
    public func registerStage(
        from: String, to: String, willMigrate: (@Sendable (MigrationStageContext) throws -> Void)? = nil,
        didMigrate: (@Sendable (MigrationStageContext) throws -> Void)? = nil
    ) {
        entries.withLock {
            $0.stages["\(from)->\(to)"] = MigrationStageHooks(willMigrate: willMigrate, didMigrate: didMigrate)
        }
    }

    /// Checks that every policy the steps' mappings name is registered, before the first step
    /// does any work.
    /// - Throws: the `FerryError` of the one entity mapping whose policy is not registered, or
    ///   `FerryErrors` with one per mapping when there are several.
    package func checkRegistered(_ steps: [MappingModel]) throws {
        let errors = unregisteredPolicies(in: steps)
        if errors.count == 1 { throw errors[0] }
        if !errors.isEmpty { throw FerryErrors(errors) }
    }

    /// One error per entity mapping of `steps` whose policy is not registered (a dry run shows
    /// them as warnings; a migration refuses).
    package func unregisteredPolicies(in steps: [MappingModel]) -> [FerryError] {
        var errors: [FerryError] = []
        for step in steps {
            for entityMapping in step.entities {
                if let name = entityMapping.policy, makePolicy(named: name) == nil {
                    errors.append(unregistered(name, in: entityMapping))
                }
            }
        }
        return errors
    }

    /// The error for a policy `name` that `entityMapping` names and nobody registered.
    package func unregistered(_ name: String, in entityMapping: MappingModel.EntityMapping) -> FerryError {
        let known = policyNames
        return FerryError(
            .migration, "no migration policy named '\(name)' is registered (mapping \(entityMapping.name))",
            at: entityMapping.policyLocation ?? entityMapping.location,
            notes: [
                known.isEmpty
                    ? "this ferry binary has no policies; build your own with the policies registered (samples/custom-policy)"
                    : "registered: \(known.joined(separator: ", "))"
            ])
    }

    /// A new policy instance for a name, or nil when none is registered.
    ///
    /// A mapping model names policies by Objective-C class name, `Module.ClassName`
    /// (`CoreDataMigration_Example.Post2ToPost3MigrationPolicy`), and the module is the app's,
    /// not the ferry executable's: so the module prefix is optional on both sides. The exact name
    /// is used first; else the registered name whose class part (after the last `.`) equals the
    /// name's class part, when exactly one does.
    public func makePolicy(named name: String) -> (any EntityMigrationPolicy)? {
        entries.withLock { Self.factory(named: name, in: $0.factories) }?()
    }

    private static func factory(
        named name: String, in factories: [String: @Sendable () -> any EntityMigrationPolicy]
    ) -> (@Sendable () -> any EntityMigrationPolicy)? {
        if let exact = factories[name] { return exact }
        let className = Self.className(name)
        let matches = factories.filter { Self.className($0.key) == className }
        return matches.count == 1 ? matches.first?.value : nil
    }

    /// `Module.ClassName` → `ClassName`.
    private static func className(_ name: String) -> Substring {
        name.split(separator: ".", omittingEmptySubsequences: false).last ?? Substring(name)
    }

    /// The registered policy names, sorted.
    public var policyNames: [String] { entries.withLock { $0.factories.keys.sorted() } }

    package func stageHooks(from: String, to: String) -> MigrationStageHooks? {
        entries.withLock { $0.stages["\(from)->\(to)"] }
    }
}

package struct MigrationStageHooks: Sendable {
    package var willMigrate: (@Sendable (MigrationStageContext) throws -> Void)?
    package var didMigrate: (@Sendable (MigrationStageContext) throws -> Void)?
}

/// What stage hooks get: the step's versions and the store being migrated (the source before the
/// step, read-only; the destination after the data was copied, writable, before verification).
///
/// Query the store with ``scalar(_:_:)``, ``rows(_:_:)`` and ``execute(_:_:)``, qualifying its
/// tables with ``schema``.
public struct MigrationStageContext {
    /// The version the step migrates from.
    public var fromVersion: String
    /// The version the step migrates to.
    public var toVersion: String
    /// The step's connection (the source is `main`, the destination `dst`).
    package var connection: Connection
    /// The schema name to qualify tables with (`main` for the source, `dst` for the destination).
    public var schema: String

    package init(fromVersion: String, toVersion: String, connection: Connection, schema: String) {
        self.fromVersion = fromVersion
        self.toVersion = toVersion
        self.connection = connection
        self.schema = schema
    }

    /// The first column of the first row of a query, nil when it returns no row.
    public func scalar(_ sql: String, _ arguments: [DatabaseValue] = []) throws -> DatabaseValue? {
        try connection.scalar(sql, arguments)
    }

    /// Every row of a query.
    public func rows(_ sql: String, _ arguments: [DatabaseValue] = []) throws -> [[DatabaseValue]] {
        try connection.rows(sql, arguments)
    }

    /// Runs a statement (the destination is writable in `didMigrate`; the source never is).
    public func execute(_ sql: String, _ arguments: [DatabaseValue] = []) throws {
        try connection.execute(sql, arguments)
    }
}

/// Answers policies' questions during a migration step and writes what they create: Core Data's
/// `NSMigrationManager`.
///
/// Source ↔ destination associations are kept in a temporary on-disk table, so memory does not
/// grow with the store.
public final class MigrationManager {
    /// The connection: the source store is `main` (read-only), the destination is `dst`.
    package let connection: Connection
    /// The model version migrated from.
    public let sourceModel: ObjectModel
    /// The model version migrated to.
    public let destinationModel: ObjectModel
    /// Writes what the policies create; it does not refer back to the manager.
    private let writer: any MigrationWriting
    private var cancelled = false

    init(connection: Connection, sourceModel: ObjectModel, destinationModel: ObjectModel, writer: any MigrationWriting)
    {
        self.connection = connection
        self.sourceModel = sourceModel
        self.destinationModel = destinationModel
        self.writer = writer
    }

    /// The destination values the mapping gives for a source object (before any policy change),
    /// by column name.
    ///
    /// The dictionary keeps one layout for all the mapping's objects: when a policy changes only
    /// its values (not its keys), ``insertDestinationInstance(_:forSource:mapping:)`` binds it by
    /// position. ``mappedRow(forSource:mapping:)`` gives the same values with no dictionary.
    public func mappedValues(forSource source: MigrationObject, mapping: MappingContext) throws -> [String: Value] {
        try writer.mappedRow(forSource: source, mappingName: mapping.name).dictionary
    }

    /// The destination values the mapping gives for a source object (before any policy change),
    /// by position: the positions of ``MappingContext/destinationColumns``. No dictionary is made;
    /// insert the row (changed or not) with ``insertDestinationRow(_:forSource:mapping:)``.
    public func mappedRow(forSource source: MigrationObject, mapping: MappingContext) throws -> MigrationRow {
        try writer.mappedRow(forSource: source, mappingName: mapping.name)
    }

    /// An empty row (every value nil) for the named entity mapping's destination entity, to fill
    /// by position and insert with ``insertDestinationRow(_:forSource:mappingNamed:)``.
    public func emptyRow(forMappingNamed name: String) throws -> MigrationRow {
        MigrationRow(columns: try writer.destinationColumns(forMapping: name))
    }

    /// Inserts a destination object for a source object and associates the two. The first object
    /// made from a source object keeps its primary key; further ones get new keys.
    @discardableResult
    public func insertDestinationInstance(
        _ values: [String: Value], forSource source: MigrationObject?, mapping: MappingContext
    ) throws -> MigrationObject {
        try writer.insertDestination(values, forSource: source, mappingName: mapping.name)
    }

    /// Inserts a destination object for another entity mapping of the step, named as the mapping
    /// model names it (ferry's name or Core Data's `<Source>To<Destination>`): the `Section` a
    /// `Post` policy makes for each post (Core Data's `NSEntityDescription.insertNewObject(forEntityName:into:)`
    /// on the manager's destination context). With a `source`, the object is associated with it
    /// under that mapping, for ``destinationInstances(forMapping:sourceInstances:)``.
    @discardableResult
    public func insertDestinationInstance(
        _ values: [String: Value], forSource source: MigrationObject?, mappingNamed name: String
    ) throws -> MigrationObject {
        try writer.insertDestination(values, forSource: source, mappingName: name)
    }

    /// Inserts a destination object from a row for a source object and associates the two, as
    /// ``insertDestinationInstance(_:forSource:mapping:)`` does: a row of the mapping's
    /// ``MappingContext/destinationColumns`` is bound by position, any other row by column name.
    @discardableResult
    public func insertDestinationRow(
        _ row: MigrationRow, forSource source: MigrationObject?, mapping: MappingContext
    ) throws -> MigrationObject {
        try writer.insertDestination(row, forSource: source, mappingName: mapping.name)
    }

    /// Inserts a destination object from a row for another entity mapping of the step, as
    /// ``insertDestinationInstance(_:forSource:mappingNamed:)`` does (a row from
    /// ``emptyRow(forMappingNamed:)`` is bound by position).
    @discardableResult
    public func insertDestinationRow(
        _ row: MigrationRow, forSource source: MigrationObject?, mappingNamed name: String
    ) throws -> MigrationObject {
        try writer.insertDestination(row, forSource: source, mappingName: name)
    }

    /// Destination objects the named mapping made from these source objects (primary keys).
    public func destinationInstances(forMapping name: String, sourceInstances: [Int64]) throws -> [Int64] {
        try writer.destinationKeys(forMapping: name, sources: sourceInstances)
    }

    /// Source objects the named mapping made these destination objects from.
    public func sourceInstances(forMapping name: String, destinationInstances: [Int64]) throws -> [Int64] {
        try writer.sourceKeys(forMapping: name, destinations: destinationInstances)
    }

    /// Records that `destination` was made from `source` by the named mapping.
    public func associate(source: Int64, destination: Int64, mapping name: String) throws {
        try writer.associate(source: source, destination: destination, mapping: name)
    }

    /// Sets a to-one relationship of a destination object to another destination object.
    public func setRelationship(_ relationship: String, of destination: MigrationObject, to target: Int64?) throws {
        try writer.setRelationship(
            relationship, entity: destination.entity, key: destination.primaryKey, target: target)
    }

    /// How far the step is (objects processed in the current mapping).
    public private(set) var processed = 0

    /// A new entity mapping starts: ``processed`` counts from zero again.
    func startMapping() { processed = 0 }

    func didProcess() throws {
        processed += 1
        if cancelled { throw FerryError(.cancelled, "the migration was cancelled") }
    }

    /// Stops the migration with an error at the next object; the original store stays as it was.
    public func cancel() { cancelled = true }
}

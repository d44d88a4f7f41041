/// A property to fetch: a key path from the request's entity to an attribute or a to-one
/// relationship (`email`, `customer.email`, `customer`), and where it was written.
public struct FetchProperty: Sendable, Hashable, ExpressibleByStringLiteral {
    /// The key path, as written (`customer.email`).
    public var keyPath: String
    /// Where the key path was written (`--fields:1:9`, `job.yml:7:15`), for errors.
    public var location: InputLocation?

    /// A property at `keyPath`, written at `location`.
    public init(_ keyPath: String, location: InputLocation? = nil) {
        self.keyPath = keyPath
        self.location = location
    }

    /// A property at the literal key path.
    public init(stringLiteral value: String) { self.init(value) }

    /// Splits a comma-separated list (`id,email,customer.email`), locating each key path from
    /// `location` (the list's first character) so that errors point at the offending key.
    public static func list(_ text: String, location: InputLocation? = nil) -> [FetchProperty] {
        var result: [FetchProperty] = []
        var offset = 0
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            let leading = part.utf8.prefix { $0 == UInt8(ascii: " ") }.count
            let trimmed = part.trimmingSpaces()
            if !trimmed.isEmpty {
                result.append(FetchProperty(trimmed, location: location?.advanced(by: offset + leading)))
            }
            offset += part.utf8.count + 1
        }
        return result
    }
}

/// One sort key of a fetch request (Core Data's `NSSortDescriptor`): a key path to an attribute
/// or to-one relationship, ascending or descending.
public struct SortDescriptor: Sendable, Hashable {
    /// The key path sorted by.
    public var keyPath: String
    /// Ascending (the default) or descending.
    public var ascending: Bool
    /// Where the key path was written, for errors.
    public var location: InputLocation?

    /// A sort by `keyPath`, ascending unless `ascending` is false.
    public init(_ keyPath: String, ascending: Bool = true, location: InputLocation? = nil) {
        self.keyPath = keyPath
        self.ascending = ascending
        self.location = location
    }

    /// Parses `key`, `key:asc` or `key:desc` (the form of `--sort` and a job's `sort:`).
    public static func parse(_ text: String, location: InputLocation? = nil) throws(FerryError) -> SortDescriptor {
        var key = Substring(text)
        var ascending = true
        if let colon = text.lastIndex(of: ":") {
            let direction = text[text.index(after: colon)...].lowercased()
            switch direction {
            case "asc", "ascending": ascending = true
            case "desc", "descending": ascending = false
            default:
                let column = text[..<colon].utf8.count + 1
                throw FerryError(
                    .invalidDefinition, "unknown sort direction '\(direction)' (asc or desc)",
                    at: location?.advanced(by: column))
            }
            key = text[..<colon]
        }
        let trimmed = key.trimmingSpaces()
        guard !trimmed.isEmpty else {
            throw FerryError(
                .invalidDefinition, "a sort key needs a key path, as in 'name' or 'name:desc'", at: location)
        }
        return SortDescriptor(trimmed, ascending: ascending, location: location)
    }
}

/// What a fetched column holds.
public struct FetchColumn: Sendable, Hashable {
    /// The key path as requested: the column's name in exports.
    public var name: String
    /// The type of the values: the attribute's, or for a relationship the type of the related
    /// object's key (its single-attribute unique attribute, else `int64` for its `ferry_pk`).
    public var type: AttributeType
    /// True when the key path ends at a relationship and the column holds the related object's key.
    public var isRelationshipKey: Bool
    /// For a relationship key: the destination attribute that is the key, or nil for `ferry_pk`.
    public var keyAttribute: String?
}

/// A request for the objects of one entity, in the spirit of Core Data's `NSFetchRequest`:
/// a predicate, sort descriptors (through to-one relationships), a limit and an offset, and
/// the properties to fetch. Results stream through a ``FetchCursor``; nothing is collected.
///
/// ```swift
/// var request = FetchRequest(entity: "Order")
/// request.predicate = try Predicate(format: "total > 100")
/// request.sortDescriptors = [SortDescriptor("customer.email"), SortDescriptor("total", ascending: false)]
/// request.properties = ["number", "total", "customer.email"]
/// request.limit = 10
/// try store.fetch(request) { cursor in
///     while let row = try cursor.next() { print(row) }
/// }
/// ```
///
/// Order: values sort as SQLite sorts their stored form (text byte-wise, so dates in their
/// fixed-width UTC form sort chronologically), except decimals, which sort numerically and
/// exactly (`CAST(x AS REAL)`, ties broken by the exact `ferry_decimal` collation). `nil`
/// sorts first ascending and last descending. The primary key breaks every remaining tie, so
/// `limit`/`offset` pages are stable.
///
/// Relationships: a key path that ends at a to-one relationship fetches the related object's
/// key: the attribute of its first single-attribute uniqueness constraint, else its `ferry_pk`.
/// To-many relationships cannot be fetched or sorted by.
public struct FetchRequest: Sendable {
    /// The collation that orders decimal text exactly; registered on every store connection.
    package static let decimalCollation = "ferry_decimal"

    /// The entity fetched.
    public var entity: String
    /// The objects to fetch; nil fetches every object.
    public var predicate: Predicate?
    /// The sort order; the primary key breaks ties, and orders the rows when empty.
    public var sortDescriptors: [SortDescriptor]
    /// At most this many rows (nil: no limit).
    public var limit: Int?
    /// Rows to skip first.
    public var offset: Int
    /// The key paths to fetch, in order; nil fetches every attribute, then every to-one
    /// relationship as the related object's key.
    public var properties: [FetchProperty]?
    /// Where the entity name was written, for errors.
    public var entityLocation: InputLocation?

    /// A fetch of `entity`'s objects, filtered, sorted, paged and projected onto `properties`.
    public init(
        entity: String, predicate: Predicate? = nil, sortDescriptors: [SortDescriptor] = [], limit: Int? = nil,
        offset: Int = 0,
        properties: [FetchProperty]? = nil, entityLocation: InputLocation? = nil
    ) {
        self.entity = entity
        self.predicate = predicate
        self.sortDescriptors = sortDescriptors
        self.limit = limit
        self.offset = offset
        self.properties = properties
        self.entityLocation = entityLocation
    }

    /// Checks the request against `model` and compiles it to one SQL query.
    ///
    /// - Throws: `invalidDefinition` for an unknown entity or key path (with the closest name
    ///   as a suggestion) or a to-many key path; `invalidPredicate` for a predicate that does not
    ///   fit the entity; `usage` for a negative limit or offset.
    package func compile(model: ObjectModel, layout: any StoreLayout) throws(FerryError) -> FetchQuery {
        try compiled(model: model, layout: layout, selectingKey: false)
    }

    /// The request compiled with the object's key (`t0`'s key column) selected before the
    /// requested columns (not in ``FetchQuery/columns``).
    package func compileSelectingKey(model: ObjectModel, layout: any StoreLayout) throws(FerryError) -> FetchQuery {
        try compiled(model: model, layout: layout, selectingKey: true)
    }

    /// Checks the request against `model` without touching any store (what is valid does not
    /// depend on a store's layout): the errors of `compile(model:layout:)`.
    public func check(model: ObjectModel) throws(FerryError) {
        _ = try compiled(model: model, layout: FerryLayout(), selectingKey: false)
    }

    private func compiled(
        model: ObjectModel, layout: any StoreLayout, selectingKey: Bool
    ) throws(FerryError) -> FetchQuery {
        guard let entity = model.entity(named: entity) else {
            throw FerryError(
                .invalidDefinition,
                "unknown entity '\(self.entity)' in model '\(model.name)'\(Suggestions.didYouMean(self.entity, in: model.entityNames))",
                at: entityLocation)
        }
        if let limit, limit < 0 { throw FerryError(.usage, "the limit must be 0 or more, not \(limit)") }
        if offset < 0 { throw FerryError(.usage, "the offset must be 0 or more, not \(offset)") }
        var builder = FetchQueryBuilder(model: model, layout: layout, entity: entity)
        let properties = self.properties ?? Self.defaultProperties(of: entity)
        var selected: [String] = []
        var columns: [FetchColumn] = []
        for property in properties {
            let (sql, column) = try builder.column(property.keyPath, location: property.location)
            selected.append(sql)
            columns.append(column)
        }
        var orderings: [String] = []
        for descriptor in sortDescriptors {
            let (sql, column) = try builder.column(descriptor.keyPath, location: descriptor.location)
            let ordered = column.type == .date ? layout.valueCoding.orderedDate(sql) : sql
            orderings += layout.dialect.ordering(ordered, type: column.type, ascending: descriptor.ascending)
        }
        var arguments: [DatabaseValue] = []
        let key = "t0.\(layout.dialect.quote(layout.keyColumn))"
        var text =
            "SELECT " + (selectingKey ? key + ", " : "")
            + (selected.isEmpty ? "NULL" : selected.joined(separator: ", "))
        text += " FROM \(layout.quotedSource(for: entity)) AS t0"
        for join in builder.joins { text += " " + join }
        var predicateIsExact = true
        if let predicate {
            let filter = try predicate.filter(for: entity, model: model, layout: layout, alias: "t0")
            let compiled = filter.sql
            predicateIsExact = filter.isExact
            text += " WHERE " + compiled.sql
            arguments += compiled.arguments
        }
        orderings.append(key)
        text += " ORDER BY " + orderings.joined(separator: ", ")
        // A superset filter leaves the limit and offset to ferry, after its own evaluation.
        if predicateIsExact, limit != nil || offset > 0 {
            text += " LIMIT ? OFFSET ?"
            arguments += [limit.map { .integer(Int64($0)) } ?? layout.dialect.unlimited, .integer(Int64(offset))]
        }
        return FetchQuery(
            sql: text, arguments: arguments, columns: selected.isEmpty ? [] : columns,
            predicateIsExact: predicateIsExact)
    }

    /// Every attribute, then every to-one relationship (fetched as the related object's key).
    public static func defaultProperties(of entity: EntityDescription) -> [FetchProperty] {
        entity.attributes.map { FetchProperty($0.name) }
            + entity.relationships.filter { !$0.isToMany }.map { FetchProperty($0.name) }
    }

    /// The key of a destination entity: the attribute of its first single-attribute uniqueness
    /// constraint, or nil when it has none (its `ferry_pk` is the key then).
    public static func keyAttribute(of entity: EntityDescription) -> AttributeDescription? {
        for constraint in entity.uniquenessConstraints where constraint.count == 1 {
            if let attribute = entity.attribute(named: constraint[0]) { return attribute }
        }
        return nil
    }
}

/// A fetch request compiled to SQL.
package struct FetchQuery: Sendable, Hashable {
    /// The `SELECT` statement, with `?` for every value.
    package var sql: String
    package var arguments: [DatabaseValue]
    /// One per selected column, in order.
    package var columns: [FetchColumn]
    /// False when the `WHERE` clause selects a superset of the predicate's rows (on PostgreSQL,
    /// ``PredicateFilter``): ferry then evaluates the predicate on each row, and applies
    /// the limit and offset itself (the SQL has none).
    package var predicateIsExact = true
}

/// Resolves key paths to SQL column expressions, adding a `LEFT JOIN` per to-one relationship
/// path (shared by every key path that goes through it).
struct FetchQueryBuilder {
    let model: ObjectModel
    let layout: any StoreLayout
    let entity: EntityDescription
    private(set) var joins: [String] = []
    /// Relationship path (`customer`, `order.customer`) → alias of the joined table.
    private var aliases: [String: String] = [:]

    init(model: ObjectModel, layout: any StoreLayout, entity: EntityDescription) {
        self.model = model
        self.layout = layout
        self.entity = entity
    }

    mutating func column(_ keyPath: String, location: InputLocation?) throws(FerryError) -> (String, FetchColumn) {
        let components = keyPath.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        var current = entity
        var alias = "t0"
        var path = ""
        var offset = 0
        for (index, name) in components.enumerated() {
            let here = location?.advanced(by: offset)
            offset += name.utf8.count + 1
            let isLast = index == components.count - 1
            if name.isEmpty {
                throw FerryError(.invalidDefinition, "'\(keyPath)' is not a key path (empty component)", at: here)
            }
            if let attribute = current.attribute(named: name) {
                guard isLast else {
                    throw FerryError(
                        .invalidDefinition,
                        "'\(name)' of \(current.name) is an attribute, not a relationship, so '\(components[index + 1])' cannot follow it",
                        at: here)
                }
                let sql = "\(alias).\(layout.quotedColumn(forAttribute: attribute.name, in: current))"
                return (
                    sql, FetchColumn(name: keyPath, type: attribute.type, isRelationshipKey: false, keyAttribute: nil)
                )
            }
            guard let relationship = current.relationship(named: name) else {
                let candidates = isLast ? current.propertyNames : current.relationships.map(\.name)
                throw FerryError(
                    .invalidDefinition,
                    "\(current.name) has no \(isLast ? "attribute" : "relationship") '\(name)'\(Suggestions.didYouMean(name, in: candidates))",
                    at: here)
            }
            guard !relationship.isToMany else {
                throw FerryError(
                    .invalidDefinition,
                    "'\(name)' of \(current.name) is a to-many relationship; only attributes and to-one relationships can be fetched or sorted by",
                    at: here)
            }
            guard let destination = model.entity(named: relationship.destination) else {
                throw FerryError(
                    .invalidDefinition,
                    "relationship '\(name)' of \(current.name) leads to \(relationship.destination), which the model lacks",
                    at: here)
            }
            path += (path.isEmpty ? "" : ".") + name
            if isLast {
                let key = FetchRequest.keyAttribute(of: destination)
                if key == nil,
                    case .foreignKey(let column) = layout.storage(of: relationship, in: current, model: model)
                {
                    // The foreign key is the related object's ferry_pk: no join needed.
                    return (
                        "\(alias).\(layout.dialect.quote(column))",
                        FetchColumn(name: keyPath, type: .int64, isRelationshipKey: true, keyAttribute: nil)
                    )
                }
                let joined = join(relationship, from: current, alias: alias, path: path, destination: destination)
                let sql =
                    key.map { "\(joined).\(layout.quotedColumn(forAttribute: $0.name, in: destination))" }
                    ?? "\(joined).\(layout.dialect.quote(layout.keyColumn))"
                return (
                    sql,
                    FetchColumn(
                        name: keyPath, type: key?.type ?? .int64, isRelationshipKey: true, keyAttribute: key?.name)
                )
            }
            alias = join(relationship, from: current, alias: alias, path: path, destination: destination)
            current = destination
        }
        throw FerryError(.invalidDefinition, "'\(keyPath)' is not a key path", at: location)
    }

    /// The alias of `destination` joined through `relationship` (added once per path).
    private mutating func join(
        _ relationship: RelationshipDescription, from source: EntityDescription, alias: String, path: String,
        destination: EntityDescription
    ) -> String {
        if let existing = aliases[path] { return existing }
        let next = "j\(aliases.count + 1)"
        aliases[path] = next
        let dialect = layout.dialect
        let table = layout.quotedSource(for: destination)
        let pk = dialect.quote(layout.keyColumn)
        switch layout.storage(of: relationship, in: source, model: model) {
        case .foreignKey(let column):
            joins.append("LEFT JOIN \(table) AS \(next) ON \(next).\(pk) = \(alias).\(dialect.quote(column))")
        case .inverseForeignKey(_, let column):
            // One-to-one whose key is on the other side: at most one row, the first if several.
            joins.append(
                "LEFT JOIN \(table) AS \(next) ON \(next).\(pk) = (SELECT \(next)x.\(pk) FROM \(table) AS \(next)x WHERE \(next)x.\(dialect.quote(column)) = \(alias).\(pk) ORDER BY \(next)x.\(pk) LIMIT 1)"
            )
        case .joinTable:
            // Only to-one relationships reach here, and they never use join tables.
            joins.append("LEFT JOIN \(table) AS \(next) ON 0")
        }
        return next
    }
}

/// A forward-only, throwing cursor over the rows of a fetch request (like GRDB's cursors: it
/// cannot be repeated, and lives only inside the `read` or `fetch` closure that made it).
///
/// Read typed rows with ``next()``, or, for speed, ``advance()`` and the column accessors,
/// which read SQLite's memory without copying. On a store of another engine the accessors read
/// the current row of the engine's row source in ferry's stored forms (on PostgreSQL: streamed
/// by `COPY (SELECT …) TO STDOUT` when the server evaluates the whole predicate, else through a
/// cursor, ferry evaluating what the server cannot).
public final class FetchCursor {
    /// The columns, in order.
    public let columns: [FetchColumn]
    /// The compiled query.
    package let query: FetchQuery
    private let statement: Statement?
    private let source: (any FetchRowSource)?
    private let coding: DispatchedValueCoding
    private var done = false

    /// Prepares the request on a connection to a store of `layout` (inside `store.read { … }`).
    package init(
        _ request: FetchRequest, connection: any DatabaseConnection, model: ObjectModel, layout: any StoreLayout
    ) throws {
        query = try request.compile(model: model, layout: layout)
        columns = query.columns
        let rows = try connection.engineSession().fetchRows(for: request, query: query, model: model, layout: layout)
        statement = rows.statement
        source = rows.source
        coding = rows.coding
    }

    /// The next row as typed values, or nil at the end.
    public func next() throws -> [Value]? {
        guard try advance() else { return nil }
        return (0..<columns.count).map { value(at: $0) }
    }

    /// Moves to the next row; false at the end. Read it with the accessors below.
    public func advance() throws -> Bool {
        if done { return false }
        if let statement, try statement.step() { return true }
        if let source, try source.advance() { return true }
        done = true
        return false
    }

    /// Ends the cursor early because its reader failed: on PostgreSQL, the server stops sending
    /// rows (instead of the rest being read and dropped before the next statement).
    package func cancel() {
        done = true
        source?.cancel()
    }

    /// The stored value of a column of the current row.
    @inline(__always)
    private func stored(at index: Int) -> DatabaseValue {
        if let statement { return statement.value(at: index) }
        return source?.value(at: index) ?? .null
    }

    /// The typed value of a column of the current row.
    public func value(at index: Int) -> Value {
        coding.decode(stored(at: index), as: columns[index].type)
    }

    @inline(__always) package func storageClass(at index: Int) -> DatabaseValue.StorageClass {
        if let statement { return statement.storageClass(at: index) }
        return source?.storageClass(at: index) ?? .null
    }

    @inline(__always) package func int64(at index: Int) -> Int64 {
        if let statement { return statement.int64(at: index) }
        return source?.int64(at: index) ?? 0
    }

    @inline(__always) package func double(at index: Int) -> Double {
        if let statement { return statement.double(at: index) }
        return source?.double(at: index) ?? 0
    }

    /// The column's text bytes, without copying.
    @inline(__always)
    package func withTextBytes<T>(at index: Int, _ body: (UnsafeBufferPointer<UInt8>) throws -> T) rethrows -> T {
        if let statement { return try statement.withTextBytes(at: index, body) }
        if let source { return try source.withTextBytes(at: index, body) }
        return try body(UnsafeBufferPointer(start: nil, count: 0))
    }

    /// The column's blob bytes, without copying.
    @inline(__always)
    package func withBlobBytes<T>(at index: Int, _ body: (UnsafeBufferPointer<UInt8>) throws -> T) rethrows -> T {
        if let statement { return try statement.withBlobBytes(at: index, body) }
        if let source { return try source.withBlobBytes(at: index, body) }
        return try body(UnsafeBufferPointer(start: nil, count: 0))
    }
}

@available(*, unavailable, message: "a cursor belongs to one connection and one thread")
extension FetchCursor: Sendable {}

extension Store {
    /// Runs a fetch request in a read transaction and hands its cursor to `body`.
    ///
    /// ```swift
    /// let emails = try store.fetch(FetchRequest(entity: "Customer", properties: ["email"])) { cursor in
    ///     var count = 0
    ///     while try cursor.next() != nil { count += 1 }
    ///     return count
    /// }
    /// ```
    public func fetch<T>(_ request: FetchRequest, _ body: (FetchCursor) throws -> T) throws -> T {
        try readDatabase { connection in
            let cursor = try FetchCursor(request, connection: connection, model: model, layout: layout)
            do {
                return try body(cursor)
            } catch {
                cursor.cancel()
                throw error
            }
        }
    }
}

extension InputLocation {
    /// The location `bytes` columns further on the same line (unchanged when the column is unknown).
    package func advanced(by bytes: Int) -> InputLocation {
        guard column > 0 else { return self }
        var location = self
        location.column += bytes
        return location
    }
}

extension Substring {
    func trimmingSpaces() -> String {
        var slice = self[...]
        while slice.first == " " { slice = slice.dropFirst() }
        while slice.last == " " { slice = slice.dropLast() }
        return String(slice)
    }
}

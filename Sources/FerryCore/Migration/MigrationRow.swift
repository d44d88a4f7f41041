/// The values of one object by position: a policy's typed, by-position view of a source object
/// or of the destination values it writes, with no dictionary per object.
///
/// A row's ``columns`` name its positions; they are shared by every row of an entity mapping, so
/// a policy looks a name up once (in ``EntityMigrationPolicy/begin(mapping:manager:)``, from
/// ``MappingContext/destinationColumns`` or ``MappingContext/sourceColumns``) and then reads and
/// writes by position:
///
/// ```swift
/// func begin(mapping: MappingContext, manager: MigrationManager) throws {
///     phone = mapping.destinationColumns.position(of: "phone")
/// }
///
/// func createDestinationInstances(
///     forSource source: MigrationObject, mapping: MappingContext, manager: MigrationManager
/// ) throws {
///     var row = try manager.mappedRow(forSource: source, mapping: mapping)
///     if let phone, let number = row.string(at: phone) { row[phone] = .string(normalize(number)) }
///     try manager.insertDestinationRow(row, forSource: source, mapping: mapping)
/// }
/// ```
///
/// Positions run from 0 to ``count`` minus 1; reading or writing another position stops the
/// program, as an array index out of range does.
public struct MigrationRow: Sendable, Hashable, CustomStringConvertible {
    /// The names of the row's positions.
    public let columns: MigrationColumns
    /// The values; the row's positions start at `columns.offset` (a selected source row keeps
    /// its primary key before them).
    var storage: [Value]

    init(columns: MigrationColumns, storage: [Value]) {
        self.columns = columns
        self.storage = storage
    }

    /// A row of `columns` whose values are all nil.
    public init(columns: MigrationColumns) {
        self.init(columns: columns, storage: Array(repeating: .null, count: columns.offset + columns.count))
    }

    /// The number of positions.
    public var count: Int { columns.count }

    /// The value at a position.
    public subscript(position: Int) -> Value {
        get { storage[columns.offset + position] }
        set { storage[columns.offset + position] = newValue }
    }

    /// The value of a column by name, `.null` when the row has no such column (a look-up by
    /// name: resolve the position once with ``MigrationColumns/position(of:)`` in per-object code).
    public subscript(name: String) -> Value {
        columns.position(of: name).map { self[$0] } ?? .null
    }

    /// The text at a position, nil when the value is not a `.string`.
    public func string(at position: Int) -> String? {
        if case .string(let text) = self[position] { return text }
        return nil
    }

    /// The integer at a position, nil when the value is not an `.integer`.
    public func int64(at position: Int) -> Int64? {
        if case .integer(let number) = self[position] { return number }
        return nil
    }

    /// The floating-point number at a position, nil when the value is not a `.double`.
    public func double(at position: Int) -> Double? {
        if case .double(let number) = self[position] { return number }
        return nil
    }

    /// The decimal's canonical text at a position, nil when the value is not a `.decimal`.
    public func decimal(at position: Int) -> String? {
        if case .decimal(let text) = self[position] { return text }
        return nil
    }

    /// The boolean at a position, nil when the value is not a `.bool`.
    public func bool(at position: Int) -> Bool? {
        if case .bool(let flag) = self[position] { return flag }
        return nil
    }

    /// The instant at a position, nil when the value is not a `.date`.
    public func date(at position: Int) -> Timestamp? {
        if case .date(let instant) = self[position] { return instant }
        return nil
    }

    /// The values in position order.
    public var values: [Value] { Array(storage[columns.offset..<columns.offset + columns.count]) }

    /// The values by column name (made on each call: the dictionary API's form).
    public var dictionary: [String: Value] { columns.dictionary(from: storage) }

    /// Equal column names and equal values at every position.
    public static func == (lhs: MigrationRow, rhs: MigrationRow) -> Bool {
        (lhs.columns === rhs.columns || lhs.columns.names == rhs.columns.names) && lhs.values == rhs.values
    }

    /// Hashes the column names and the values.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(columns.names)
        hasher.combine(values)
    }

    /// `name: value` for every position.
    public var description: String {
        "[" + zip(columns.names, values).map { "\($0): \($1)" }.joined(separator: ", ") + "]"
    }
}

/// The column names of an entity mapping's rows, in position order, with each name's position
/// resolved once for all the mapping's objects.
///
/// A mapping's destination columns (``MappingContext/destinationColumns``) are the destination
/// entity's attributes in model order, then the stored keys of its to-one relationships (the
/// store's column names), as ``MigrationManager/mappedRow(forSource:mapping:)`` gives them. Its
/// source columns (``MappingContext/sourceColumns``) are the source entity's attributes in model
/// order, then its to-one relationships (the related object's primary key).
public final class MigrationColumns: Sendable, CustomStringConvertible {
    /// The names, in position order.
    public let names: [String]
    /// Name → position (the first position of a name that appears twice).
    private let positions: [String: Int]
    /// Where position 0 is in a row's storage (1 for a selected source row: its key comes first).
    let offset: Int
    /// Every name with a nil value, in one dictionary whose copies keep its layout: the
    /// dictionary API fills a copy through its storage order, with no hashing per value.
    private let template: [String: Value]
    /// The name at each step of `template`'s storage order, and its position.
    let templateOrder: [(name: String, position: Int)]

    /// Columns with these names; `offset` is where position 0 is in a row's storage.
    init(names: [String], offset: Int = 0) {
        self.names = names
        self.offset = offset
        var positions: [String: Int] = [:]
        for (position, name) in names.enumerated() where positions[name] == nil {
            positions[name] = position
        }
        self.positions = positions
        let template = positions.mapValues { _ in Value.null }
        self.template = template
        self.templateOrder = template.keys.map { ($0, positions[$0] ?? 0) }
    }

    /// Columns with these names, in this order (for rows a policy makes itself).
    public convenience init(_ names: [String]) {
        self.init(names: names, offset: 0)
    }

    /// The number of columns.
    public var count: Int { names.count }

    /// The position of a name, nil when there is no such column.
    public func position(of name: String) -> Int? { positions[name] }

    /// The names, in position order.
    public var description: String { names.joined(separator: ", ") }

    /// True when every name appears once (a dictionary of the row then has one entry per position).
    var namesAreUnique: Bool { template.count == names.count }

    /// The values of a row's `storage` by name: a copy of the template filled in its storage
    /// order (no hashing; one allocation).
    func dictionary(from storage: [Value]) -> [String: Value] {
        var values = template
        var index = values.startIndex
        var step = 0
        while index != values.endIndex {
            values.values[index] = storage[offset + templateOrder[step].position]
            index = values.index(after: index)
            step += 1
        }
        return values
    }

    /// Calls `body` with each value of `values` and its position, walking the dictionary in
    /// storage order, when its keys are these columns' names in the template's order (a copy of
    /// the template, as ``dictionary(from:)`` makes, changed only in its values); returns false,
    /// having called `body` for a prefix at most, when they are not.
    func forEachPositioned(
        in values: [String: Value], _ body: (_ value: Value, _ position: Int) throws -> Void
    ) rethrows -> Bool {
        guard values.count == templateOrder.count, namesAreUnique else { return false }
        var step = 0
        for (name, value) in values {
            let expected = templateOrder[step]
            guard name == expected.name else { return false }
            try body(value, expected.position)
            step += 1
        }
        return true
    }
}

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
    /// its primary key before them). A value still in `pending` is not here yet (a placeholder).
    var storage: [Value]
    /// The storage indexes (bit i for index i) whose values are still in the selected row of
    /// `selected`, read only when a policy reads them (or bound in their stored form when it
    /// does not); 0 for a row whose values are all in `storage`.
    private(set) var pending: UInt64 = 0
    /// Where the pending values are.
    private(set) var selected: SelectedRowValues?

    init(columns: MigrationColumns, storage: [Value]) {
        self.columns = columns
        self.storage = storage
    }

    /// A row whose values at the storage indexes in `pending` are read from `selected` when
    /// read (`storage` holds the others).
    init(columns: MigrationColumns, storage: [Value], pending: UInt64, selected: SelectedRowValues) {
        self.columns = columns
        self.storage = storage
        self.pending = pending
        self.selected = selected
    }

    /// A row of `columns` whose values are all nil.
    public init(columns: MigrationColumns) {
        self.init(columns: columns, storage: Array(repeating: .null, count: columns.offset + columns.count))
    }

    /// The number of positions.
    public var count: Int { columns.count }

    /// The value at a position.
    public subscript(position: Int) -> Value {
        get { value(atStorageIndex: columns.offset + position) }
        set {
            let index = columns.offset + position
            storage[index] = newValue
            pending &= ~(1 << UInt64(index))
        }
    }

    /// The value at an index of `storage`, read from the selected row when it is pending.
    @inline(__always)
    private func value(atStorageIndex index: Int) -> Value {
        if pending & (1 << UInt64(index)) != 0, let selected { return selected.value(at: index) }
        return storage[index]
    }

    /// True when the value at a position was neither read nor set: the writer may bind its
    /// stored form from the selected row (``SelectedRowValues/bindStored(at:to:parameter:)``).
    @inline(__always)
    func isPending(_ position: Int) -> Bool {
        pending & (1 << UInt64(columns.offset + position)) != 0
    }

    /// `storage` with every pending value read.
    var filledStorage: [Value] {
        guard pending != 0 else { return storage }
        return storage.indices.map(value(atStorageIndex:))
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
    public var values: [Value] { (columns.offset..<columns.offset + columns.count).map(value(atStorageIndex:)) }

    /// The values by column name (made on each call: the dictionary API's form).
    public var dictionary: [String: Value] { columns.dictionary(from: filledStorage) }

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

/// The values of the row path's selected row that a policy's rows (the source object's, the
/// mapped destination row) have not read yet: each is decoded only when read, and one that is
/// never read nor changed is bound into the insert in its stored form, without being decoded
/// and encoded again (most policies read one or two values of a row).
///
/// One instance serves the rows of one object while the query is on its row; a row that
/// outlives the policy's call (kept by the policy) has its values decoded before the query
/// moves on (``detach()``), so it keeps them.
final class SelectedRowValues: @unchecked Sendable {
    // @unchecked: used on the step's thread only, and detached before the query moves on.

    /// Where the value at a storage index of a row comes from.
    struct Slot {
        /// The query's column (0 is the source key).
        let column: Int32
        /// The source attribute's type (nil for a key: an integer or nil).
        let type: AttributeType?
        /// The storage class of the type's stored form: only a value stored so is bound as stored.
        let storageClass: DatabaseValue.StorageClass
        /// The value for a nil (the mapping's `ifNil`).
        let valueIfNil: Value
    }

    private let statement: Statement
    private let coding: DispatchedValueCoding
    /// By storage index; nil for an index whose value is in the row's storage.
    private let slots: [Slot?]
    /// The values by storage index once detached.
    private var detached: [Value]?

    init(statement: Statement, coding: DispatchedValueCoding, slots: [Slot?]) {
        self.statement = statement
        self.coding = coding
        self.slots = slots
    }

    /// A new instance for the same query and slots (the next object's, once this one is detached).
    func renewed() -> SelectedRowValues {
        SelectedRowValues(statement: statement, coding: coding, slots: slots)
    }

    /// The storage indexes this instance reads (for a row's `pending`).
    var pendingMask: UInt64 {
        var mask: UInt64 = 0
        for (index, slot) in slots.enumerated() where slot != nil { mask |= 1 << UInt64(index) }
        return mask
    }

    /// The value at a storage index, decoded from the query's current row (or kept once detached).
    func value(at index: Int) -> Value {
        if let detached { return detached[index] }
        guard let slot = slots[index] else { return .null }
        let value: Value
        if let type = slot.type {
            value = coding.decode(statement.value(at: Int(slot.column)), as: type)
        } else {
            let column = Int(slot.column)
            value = statement.storageClass(at: column) == .integer ? .integer(statement.int64(at: column)) : .null
        }
        return value.isNull ? slot.valueIfNil : value
    }

    /// Binds the value at a storage index into `insert` as stored in the source (no decoding),
    /// when the query is still on its row and it is stored in its type's form; false, binding
    /// nothing, otherwise (the caller binds the decoded value).
    @inline(__always)
    func bindStored(at index: Int, to insert: Statement, parameter: Int) throws -> Bool {
        guard detached == nil, let slot = slots[index] else { return false }
        let stored = statement.storageClass(at: Int(slot.column))
        if stored == .null {
            try coding.bind(slot.valueIfNil, to: insert, at: parameter)
            return true
        }
        guard stored == slot.storageClass else { return false }
        try insert.bind(columnOf: statement, at: Int(slot.column), to: parameter)
        return true
    }

    /// Decodes every value, for rows that outlive the query's current row.
    func detach() {
        guard detached == nil else { return }
        detached = slots.indices.map(value(at:))
    }
}

import FerryCore

extension BatchInsertRequest {
    /// A batch insert of the given rows, in order.
    public init(entity: String, columns: [InsertColumn], conflictPolicy: ConflictPolicy = .error, rows: [[Value]]) {
        var next = 0
        self.init(entity: entity, columns: columns, conflictPolicy: conflictPolicy) { row in
            guard next < rows.count else { return true }
            row = rows[next]
            next += 1
            return false
        }
    }
}

import FerryCore
import FerryPostgres

/// The set-based writing of `on_conflict: update` and `replace` on PostgreSQL: the records of a
/// batch, staged by ``PostgresStagedInserter`` in a temporary table, update the objects they
/// match and insert the others with a few statements per batch, giving each record the outcome
/// SQLite's record-by-record ``BatchInserter`` gives it (`inserted`, `updated`, or the rejection
/// and its reason).
///
/// Records of one batch may depend on each other: a record may update the object an earlier
/// record inserted, or take a unique value an earlier record freed. So the batch is written in
/// rounds. Each round takes the staged records that share nothing with an earlier staged record:
/// no matched object, and no value of any uniqueness constraint, neither the values the record
/// writes nor those its object holds before. Such records commute (writing them in any order,
/// or all at once, leaves the same objects and the same outcomes), so one round is:
///
/// 1. match each staged record with the stored object holding its values of the first
///    uniqueness constraint (in the model's order) that one holds, as SQLite's lookups do;
/// 2. put off every record sharing a matched object or a unique value with an earlier staged one;
/// 3. reject in ferry what SQLite's NOT NULL would (a required value written as null);
/// 4. reject each record whose written unique values another object holds, naming the
///    constraint declared last, as SQLite does;
/// 5. one `UPDATE … FROM` changes the matched objects (`update`: the attributes the record
///    supplies; `replace`: every attribute, the others back to their defaults), one
///    `INSERT … SELECT` adds the others with the keys reserved for them.
///
/// The records put off form the next round, until none is left: a batch without repeated keys
/// takes one round, a key repeated n times n rounds.
///
/// A sync import (`mode: sync`, ``PostgresSyncMatch``) matches by its key alone (the object with
/// the smallest primary key holding the record's key values, as SQLite's lookup finds it), puts
/// off records sharing a key with an earlier staged one, notes each object it matches or inserts
/// in the tracker's table of rows seen (a record matching an object already seen is rejected:
/// the source has that key twice), updates only the objects whose values differ (the others are
/// `unchanged`), and takes *claims*: rows staged for records rejected before staging whose key
/// could be read, which write nothing but mark the object holding their key as seen, in their
/// place among the records (so a later record with that key is a duplicate, as on SQLite).
struct PostgresStagedMerge {
    private let database: PostgresDatabase
    private let rules: PostgresRecordRules
    private let policy: ConflictPolicy
    private let table: String
    private let keyColumn: String
    /// The staging table (quoted) and the images table written each round (unquoted, quoted).
    private let staging: String
    private let images: String
    /// The staging table's column of supplied flags (`1`/`0` per record column), as named.
    let maskName: String
    private let createImages: String
    private let deferredQuery: String
    private let collisionQuery: String
    private let updateStatement: String
    private let insertStatement: String
    /// Every uniqueness constraint of the entity: its stored columns and the record column of its
    /// first attribute, for the rejection's wording.
    private let constraints: [(names: [String], column: Int?)]
    /// A sync's key and table of rows seen (nil for `on_conflict: update` and `replace`).
    private let sync: PostgresSyncMatch?
    private let roundQuery: String

    /// The supplied flags of a claim (see ``PostgresSyncMatch``): no record column is supplied.
    static let claimMask = ""

    init(
        database: PostgresDatabase, model: ObjectModel, layout: any StoreLayout, rules: PostgresRecordRules,
        policy: ConflictPolicy, table: String, staging: String, sync: PostgresSyncMatch? = nil
    ) throws {
        let entity = rules.entity
        guard sync != nil || !rules.constraints.isEmpty else {
            throw FerryError(
                .usage,
                "on_conflict: \(policy.rawValue) needs the record to supply every attribute of one of \(entity.name)'s uniqueness constraints"
            )
        }
        self.database = database
        self.rules = rules
        self.policy = policy
        self.table = table
        self.staging = staging
        self.sync = sync
        let dialect = layout.dialect
        let key = dialect.quote(layout.keyColumn)
        keyColumn = key
        let images = "pg_temp." + dialect.quote(database.uniqueTemporaryName("ferry_merge_images"))
        self.images = images
        var mask = "ferry_supplied"
        while rules.plan.storedNames.contains(mask) || mask == layout.keyColumn { mask += "_" }
        maskName = mask
        let quotedMask = dialect.quote(mask)
        let names = rules.plan.storedNames.map { dialect.quote($0) }
        let recordColumn: (String) -> Int? = { name in rules.columns.firstIndex(of: .attribute(name)) }
        let supplied: (Int) -> String = { "substr(s.\(quotedMask), \($0 + 1), 1) = '1'" }
        let defaultLiteral: (AttributeDescription?) -> String = { attribute in
            attribute?.defaultValue.map { layout.valueCoding.sqlLiteral($0, in: dialect) } ?? "NULL"
        }

        // 1. The matched object: the first covered constraint's holder, in the model's order (a
        // sync: the first holder of its key).
        let target: String
        if let sync {
            let condition = sync.keyColumns.map { "t.\(names[$0]) = s.\(names[$0])" }.joined(separator: " AND ")
            target = "(SELECT t.\(key) FROM \(table) AS t WHERE \(condition) ORDER BY t.\(key) LIMIT 1)"
        } else {
            let finders = rules.constraints.map { constraint in
                let condition = constraint.columns.map { "t.\(names[$0]) = s.\(names[$0])" }.joined(
                    separator: " AND ")
                return "(SELECT t.\(key) FROM \(table) AS t WHERE \(condition) LIMIT 1)"
            }
            target = finders.count == 1 ? finders[0] : "COALESCE(\(finders.joined(separator: ", ")))"
        }
        // The values of every uniqueness constraint the record writes (after) and its object
        // holds (before). A default goes through CASE with the column so it takes its type.
        var imageColumns: [String] = []
        var constraints: [(names: [String], column: Int?)] = []
        var items: [[(after: String, before: String)]] = []
        for (offset, constraint) in entity.uniquenessConstraints.enumerated() {
            var parts: [(after: String, before: String)] = []
            for (part, attribute) in constraint.enumerated() {
                let column = layout.quotedColumn(forAttribute: attribute, in: entity)
                let written: String
                if let index = recordColumn(attribute) {
                    written =
                        policy == .replace
                        ? "s.\(names[index])"
                        : "CASE WHEN m.ferry_target IS NULL OR \(supplied(index)) THEN s.\(names[index]) ELSE o.\(column) END"
                } else {
                    let fallback = defaultLiteral(entity.attribute(named: attribute))
                    written =
                        policy == .replace
                        ? "CASE WHEN FALSE THEN o.\(column) ELSE \(fallback) END"
                        : "CASE WHEN m.ferry_target IS NULL THEN \(fallback) ELSE o.\(column) END"
                }
                imageColumns.append("\(written) AS a\(offset)_\(part)")
                imageColumns.append("o.\(column) AS b\(offset)_\(part)")
                parts.append(("a\(offset)_\(part)", "b\(offset)_\(part)"))
            }
            items.append(parts)
            constraints.append(
                (constraint.map { layout.column(forAttribute: $0, in: entity) }, constraint.first.flatMap(recordColumn))
            )
        }
        self.constraints = constraints
        createImages = """
            CREATE TEMPORARY TABLE \(images) ON COMMIT DROP AS SELECT m.ferry_k, m.ferry_target\
            \(sync == nil ? "" : ", s.\(quotedMask) = '\(Self.claimMask)' AS ferry_claim")\
            \(imageColumns.map { ", " + $0 }.joined()) \
            FROM \(staging) AS s CROSS JOIN LATERAL (SELECT s.\(key) AS ferry_k, \(target) AS ferry_target OFFSET 0) AS m \
            LEFT JOIN \(table) AS o ON o.\(key) = m.ferry_target
            """

        // 2. Records sharing a matched object or a unique value with an earlier staged record.
        var deferred = [
            "SELECT k FROM (SELECT ferry_k AS k, min(ferry_k) OVER (PARTITION BY ferry_target) AS f FROM \(images) WHERE ferry_target IS NOT NULL) AS w WHERE f < k"
        ]
        for parts in items {
            let values = parts.indices.map { "v\($0)" }
            func side(_ columns: [String]) -> String {
                let selected = zip(columns, values).map { "\($0) AS \($1)" }.joined(separator: ", ")
                let present = columns.map { "\($0) IS NOT NULL" }.joined(separator: " AND ")
                return "SELECT ferry_k AS k, \(selected) FROM \(images) WHERE \(present)"
            }
            deferred.append(
                "SELECT k FROM (SELECT k, min(k) OVER (PARTITION BY \(values.joined(separator: ", "))) AS f FROM (\(side(parts.map(\.after))) UNION ALL \(side(parts.map(\.before)))) AS x) AS w WHERE f < k"
            )
        }
        if let sync {
            // A sync's records with the same key, matched or not: the later ones see the earlier one's row.
            let values = sync.keyColumns.map { "s.\(names[$0])" }.joined(separator: ", ")
            deferred.append(
                "SELECT k FROM (SELECT s.\(key) AS k, min(s.\(key)) OVER (PARTITION BY \(values)) AS f FROM \(staging) AS s) AS w WHERE f < k"
            )
        }
        deferredQuery = deferred.joined(separator: " UNION ")
        roundQuery =
            sync.map {
                "SELECT ferry_k, ferry_target, ferry_claim, EXISTS (SELECT 1 FROM \($0.seenTable) AS z WHERE z.pk = ferry_target) FROM \(images) ORDER BY ferry_k"
            } ?? "SELECT ferry_k, ferry_target FROM \(images) ORDER BY ferry_k"

        // 4. For each record left, whether another object holds its written values, per constraint.
        let holders = entity.uniquenessConstraints.enumerated().map { offset, constraint in
            let condition = constraint.indices.map {
                "t.\(layout.quotedColumn(forAttribute: constraint[$0], in: entity)) = i.\(items[offset][$0].after)"
            }
            return
                "EXISTS (SELECT 1 FROM \(table) AS t WHERE \(condition.joined(separator: " AND ")) AND t.\(key) IS DISTINCT FROM i.ferry_target)"
        }
        collisionQuery =
            holders.isEmpty
            ? ""
            : "SELECT * FROM (SELECT i.ferry_k\(holders.enumerated().map { ", \($0.element) AS c\($0.offset)" }.joined()) FROM \(images) AS i) AS x WHERE \(holders.indices.map { "c\($0)" }.joined(separator: " OR "))"

        // 5. The writes: each column the update writes and the value it takes.
        var written: [(column: String, value: String)] = names.indices.map { index in
            (
                names[index],
                policy == .replace
                    ? "s.\(names[index])"
                    : "CASE WHEN \(supplied(index)) THEN s.\(names[index]) ELSE t.\(names[index]) END"
            )
        }
        if policy == .replace {
            let columnNames = Set(rules.columns.map(\.name))
            for attribute in entity.attributes where !columnNames.contains(attribute.name) {
                written.append(
                    (layout.quotedColumn(forAttribute: attribute.name, in: entity), defaultLiteral(attribute)))
            }
        }
        var assignments = written.map { "\($0.column) = \($0.value)" }
        if let increment = layout.versionIncrement { assignments.append(increment) }
        var update =
            "UPDATE \(table) AS t SET \(assignments.joined(separator: ", ")) FROM \(images) AS i JOIN \(staging) AS s ON s.\(key) = i.ferry_k WHERE t.\(key) = i.ferry_target"
        if sync != nil {
            // A sync writes only the objects whose values differ; the records of the others are unchanged.
            let differences = written.map { "t.\($0.column) IS DISTINCT FROM \($0.value)" }
            update += " AND (\(differences.joined(separator: " OR "))) RETURNING i.ferry_k"
        }
        updateStatement = update
        let inserted = ([key] + names).joined(separator: ", ")
        insertStatement =
            "INSERT INTO \(table) (\(inserted)) SELECT \(([key] + names).map { "s." + $0 }.joined(separator: ", ")) FROM \(images) AS i JOIN \(staging) AS s ON s.\(key) = i.ferry_k WHERE i.ferry_target IS NULL ORDER BY s.\(key)"
    }

    /// Writes the `count` staged records, whose keys are `first`, `first + 1`, … in record order
    /// (`values` holds each record's values, `width` per record, without the key; `supplied` their
    /// supplied flags, empty when every record supplies every value), round after round, and
    /// returns their outcomes in record order.
    func write(
        first: Int64, count: Int, values staged: [DatabaseValue], width: Int, supplied: [Bool]
    ) throws -> [InsertOutcome] {
        var outcomes = [InsertOutcome?](repeating: nil, count: count)
        var remaining = count
        // The statements are cheap per row but wide: compiling them (JIT) would cost seconds.
        try database.execute("SET LOCAL jit = off")
        while remaining > 0 {
            try database.execute("DROP TABLE IF EXISTS \(images)")
            try database.execute(createImages)
            // Statistics, so the joins with the staged rows below are planned as hash joins.
            try database.execute("ANALYZE \(images)")
            let putOff = Set(try database.rows(deferredQuery, []).compactMap { $0.first?.int64 })
            var leftOut: [Int64] = Array(putOff)
            var round: [Int64] = []
            // A sync's objects matched in this round, now seen.
            var seen: [Int64] = []
            for row in try database.rows(roundQuery, []) {
                guard let key = row[0].int64, !putOff.contains(key) else { continue }
                round.append(key)
                let index = Int(key - first)
                let values = Array(staged[(index * width)..<((index + 1) * width)])
                let target = row[1].int64
                if let sync {
                    if row[2].int64 == 1 {
                        // A claim writes nothing: its object (if any) is present in the source.
                        if let target { seen.append(target) }
                        outcomes[index] = .skipped
                        leftOut.append(key)
                        continue
                    }
                    if let target {
                        guard row[3].int64 != 1 else {
                            outcomes[index] = duplicate(values, sync: sync)
                            leftOut.append(key)
                            continue
                        }
                        seen.append(target)
                    }
                }
                let flags = supplied.isEmpty ? nil : supplied[(index * width)..<((index + 1) * width)]
                if let rejection = rules.missingValue(
                    in: values, supplied: flags, updating: policy == .update && target != nil)
                {
                    outcomes[index] = rejection
                    leftOut.append(key)
                } else {
                    outcomes[index] = target == nil ? .inserted : .updated
                }
            }
            try database.execute("DELETE FROM \(images) WHERE ferry_k = ANY(?1::bigint[])", [Self.array(leftOut)])
            if let sync, !seen.isEmpty {
                try database.execute(
                    "INSERT INTO \(sync.seenTable) (pk) SELECT unnest(?1::bigint[]) ON CONFLICT DO NOTHING",
                    [Self.array(seen)])
            }
            if !collisionQuery.isEmpty {
                var collided: [Int64] = []
                for row in try database.rows(collisionQuery, []) {
                    guard let key = row[0].int64 else { continue }
                    // SQLite checks the constraint declared last first.
                    let broken = row.indices.dropFirst().last { row[$0].int64 == 1 }.map { $0 - 1 }
                    outcomes[Int(key - first)] = broken.map {
                        rules.conflict(names: constraints[$0].names, column: constraints[$0].column)
                    }
                    collided.append(key)
                }
                if !collided.isEmpty {
                    try database.execute(
                        "DELETE FROM \(images) WHERE ferry_k = ANY(?1::bigint[])", [Self.array(collided)])
                }
            }
            if sync != nil {
                // The matched objects the update did not return had the record's values already.
                let written = Set(try database.rows(updateStatement, []).compactMap { $0.first?.int64 })
                for key in round where outcomes[Int(key - first)] == .updated && !written.contains(key) {
                    outcomes[Int(key - first)] = .unchanged
                }
            } else {
                try database.execute(updateStatement)
            }
            try database.execute(insertStatement)
            if let sync {
                try database.execute(
                    "INSERT INTO \(sync.seenTable) (pk) SELECT ferry_k FROM \(images) WHERE ferry_target IS NULL")
            }
            try database.execute("DELETE FROM \(staging) WHERE \(keyColumn) = ANY(?1::bigint[])", [Self.array(round)])
            remaining -= round.count
        }
        try database.execute("DROP TABLE IF EXISTS \(images)")
        return outcomes.map { $0 ?? .rejected(reason: "the record was not written", column: nil) }
    }

    /// The rejection of a sync's record whose key an earlier record of the source had, as
    /// SQLite words it.
    private func duplicate(_ values: [DatabaseValue], sync: PostgresSyncMatch) -> InsertOutcome {
        SyncTracker.repeatedKeyRejection(
            key: sync.keyColumns.map { rules.columns[$0].name },
            values: sync.keyColumns.map { rules.decoded(values, column: $0) }, column: sync.keyColumns.first)
    }

    /// A PostgreSQL array literal of keys: `{1,2,3}`.
    private static func array(_ keys: [Int64]) -> DatabaseValue {
        .text("{" + keys.map(String.init).joined(separator: ",") + "}")
    }
}

/// What ``PostgresStagedMerge`` needs for a sync import: the record columns of the key and the
/// tracker's table of the rows seen (``SyncTracker/seenTable``).
struct PostgresSyncMatch {
    /// The key's record columns, in the key's order.
    let keyColumns: [Int]
    /// The temporary table of the primary keys seen, qualified and quoted.
    let seenTable: String
}

import Foundation

/// Runs ``Check``s on a store and collects a ``VerificationReport``.
///
/// Never throws and never stops early: every check is reported, a check that cannot run is
/// reported with outcome `error`. Checks read inside one read transaction, so they all see the
/// same state of the store. Per entity, the required, types and validation checks share one
/// table scan that tests every column of a row at once and sums per condition only the rows
/// that fail one, so `--checks all` costs about one scan per entity besides
/// `PRAGMA integrity_check`, which runs meanwhile on a second connection when that one is bound
/// to see the same state (a store file in rollback-journal mode; see `ConcurrentIntegrity`).
/// docs/benchmarks.md, "Verification", has the costs.
///
/// ```swift
/// let verifier = Verifier(model: store.model)
/// let report = verifier.run(Verifier.builtInChecks(for: store.model, level: .all), on: store)
/// if let failure = report.failure { throw failure }
/// ```
public struct Verifier: Sendable {
    /// The model the store's tables are read with.
    public var model: ObjectModel
    /// How many offending records a result lists at most.
    public var maxOffending: Int

    /// A verifier of stores of `model`, listing up to `maxOffending` records per failed check.
    public init(model: ObjectModel, maxOffending: Int = 5) {
        // Transient attributes have no storage: no check reads them, whichever engine.
        self.model = model.storedForm
        self.maxOffending = maxOffending
    }

    /// The built-in checks of a level, in report order: counts, integrity, foreign keys, model
    /// hash, then per entity uniqueness, required, types, validation, relationships, to-many counts.
    public static func builtInChecks(for model: ObjectModel, level: CheckLevel) -> [Check] {
        let model = model.storedForm
        switch level {
        case .none:
            return []
        case .cheap:
            return model.entities.map { .count(entity: $0.name, expectation: nil) }
                + [.integrity(quick: true), .foreignKeys(entity: nil), .modelHash(expected: nil)]
        case .all:
            var checks: [Check] = model.entities.map { .count(entity: $0.name, expectation: nil) }
            checks += [.integrity(quick: false), .foreignKeys(entity: nil), .modelHash(expected: nil)]
            for entity in model.entities {
                checks += [
                    .uniqueness(entity: entity.name), .required(entity: entity.name), .types(entity: entity.name),
                    .validationRules(entity: entity.name), .relationships(entity: entity.name),
                    .toManyCounts(entity: entity.name),
                ]
            }
            return checks
        }
    }

    /// Merges explicit checks into built-in ones: an explicit `count` of an entity replaces the
    /// measuring-only count of the same entity; everything else is appended.
    public static func merge(_ builtIn: [Check], with explicit: [Check]) -> [Check] {
        let counted = Set(
            explicit.compactMap { check -> String? in
                if case .count(let entity, _, _) = check { return entity }
                return nil
            })
        let kept = builtIn.filter { check in
            if case .count(let entity, nil, _) = check { return !counted.contains(entity) }
            return true
        }
        var result = kept
        for check in explicit where !result.contains(check) { result.append(check) }
        return result
    }

    /// Runs the checks on a store (in one read transaction) and reports them as a suite named
    /// `name` (default: the store's path).
    public func run(_ checks: [Check], on store: Store, name: String? = nil) -> VerificationReport {
        let timestamp = DateCoding.nowText()
        let started = ContinuousClock.now
        var results: [CheckResult]
        do {
            results = try store.readDatabase { connection in run(checks, on: connection, layout: store.layout) }
        } catch {
            results = [CheckResult(check: "open", name: "read \(store.path)", outcome: .error, message: "\(error)")]
        }
        return VerificationReport(
            name: name ?? store.path, store: store.path, timestamp: timestamp,
            elapsedSeconds: Self.seconds(since: started), results: results)
    }

    /// Runs the checks on a session of a store of ``model`` in `layout` (on SQLite, the predicate
    /// and verification SQL functions must be registered on it, as every ``Store`` does).
    package func run(_ checks: [Check], on connection: any DatabaseConnection, layout: any StoreLayout) -> [CheckResult]
    {
        let session = VerificationSession(
            connection: connection, model: model, layout: layout, maxOffending: maxOffending, checks: checks)
        session.startConcurrentIntegrity()
        // Integrity checks running on their own thread are collected after the other checks, so
        // those run meanwhile; uniqueness checks come last, as a passed integrity_check proves
        // the constraints that have a unique index. The report keeps the checks' order.
        var results: [[CheckResult]] = Array(repeating: [], count: checks.count)
        let stage = checks.map(session.stage)
        for current in 0...2 {
            for index in checks.indices where stage[index] == current {
                results[index] = session.run(checks[index])
            }
        }
        let checked = results.flatMap { $0 }
        // Records are named by the store's own key column (a Core Data store's `Z_PK`).
        guard layout.keyColumn != FerryLayout.primaryKey else { return checked }
        return checked.map { result in
            var result = result
            result.offending = result.offending.map { record in
                var record = record
                if record.primaryKey != nil { record.keyColumn = layout.keyColumn }
                return record
            }
            return result
        }
    }

    /// Registers the SQL functions the checks use (`ferry_decimal_cmp`, `ferry_well_typed`,
    /// `ferry_rule_length`); every ``Store`` does so.
    package static func registerFunctions(on connection: Connection) throws {
        try WellTyped.register(on: connection)
        try LengthRuleFunction.register(on: connection)
        try connection.registerFunction("ferry_decimal_cmp", argumentCount: 2) { arguments in
            func text(_ value: DatabaseValue) -> String? {
                switch value {
                case .text(let t): return DecimalText.canonical(t)
                case .integer(let i): return String(i)
                case .real(let r): return DecimalText.canonical(String(r))
                case .null, .blob: return nil
                }
            }
            guard let a = text(arguments[0]), let b = text(arguments[1]) else { return .null }
            return .integer(Int64(DecimalText.compare(a, b)))
        }
    }

    static func seconds(since start: ContinuousClock.Instant) -> Double {
        let (s, atto) = start.duration(to: .now).components
        return Double(s) + Double(atto) / 1e18
    }
}

// MARK: - Session

/// One run of checks on one connection, with the per-entity scans shared between checks.
///
/// On PostgreSQL (`sqlite` nil) the checks that need SQLite's PRAGMAs or ferry's SQL functions
/// take another way: foreign keys are counted with queries over the layout's key columns and
/// join tables; `integrity_check` and the types check are skipped (the server keeps its pages
/// and its typed columns sound); validation rules are checked in ferry over decoded values
/// (``RuleScan``); predicate assertions, which need ferry's SQL functions, report an error.
final class VerificationSession {
    let connection: any DatabaseConnection
    /// The SQLite connection, nil on PostgreSQL.
    let sqlite: Connection?
    let model: ObjectModel
    let layout: any StoreLayout
    /// The quoted key column.
    let key: String
    let maxOffending: Int
    /// Which scan aspects each entity's single scan must cover.
    private var aspects: [String: Set<Probe.Aspect>] = [:]
    private var scans: [String: [ProbeCount]] = [:]
    private var rowCounts: [String: Int] = [:]
    private let integrityChecks: Set<Bool>
    /// True once a full integrity_check of this session found no problem.
    private var integrityPassed = false
    /// The integrity checks running on a second connection, by `quick`.
    private var concurrent: [Bool: ConcurrentIntegrity] = [:]

    init(
        connection: any DatabaseConnection, model: ObjectModel, layout: any StoreLayout, maxOffending: Int,
        checks: [Check]
    ) {
        self.connection = connection
        self.sqlite = connection as? Connection
        self.model = model
        self.layout = layout
        self.key = layout.dialect.quote(layout.keyColumn)
        self.maxOffending = maxOffending
        var integrityChecks: Set<Bool> = []
        for check in checks {
            switch check {
            case .integrity(let quick): integrityChecks.insert(quick)
            case .required(let entity): aspects[entity, default: []].insert(.required)
            case .types(let entity): aspects[entity, default: []].insert(.types)
            case .validationRules(let entity): aspects[entity, default: []].insert(.validation)
            default: break
            }
        }
        self.integrityChecks = integrityChecks
    }

    /// Starts the integrity checks asked for on a second connection, when it sees the same state
    /// of the store (see ``ConcurrentIntegrity``).
    func startConcurrentIntegrity() {
        guard let sqlite else { return }
        for quick in [false, true] where integrityChecks.contains(quick) {
            concurrent[quick] = ConcurrentIntegrity.start(for: sqlite, quick: quick)
        }
    }

    /// When a check runs: 0 first, 1 integrity checks running concurrently, 2 uniqueness
    /// checks when a full integrity_check is asked for.
    func stage(_ check: Check) -> Int {
        switch check {
        case .integrity(let quick): return concurrent[quick] != nil ? 1 : 0
        case .uniqueness: return integrityChecks.contains(false) ? 2 : 0
        default: return 0
        }
    }

    func run(_ check: Check) -> [CheckResult] {
        let started = ContinuousClock.now
        var results: [CheckResult]
        do {
            switch check {
            case .count(let entity, let expectation, let basis): results = [try count(entity, expectation, basis)]
            case .integrity(let quick): results = [try integrity(quick: quick)]
            case .foreignKeys(let entity): results = [try foreignKeys(entity)]
            case .uniqueness(let entity): results = try uniqueness(try lookup(entity))
            case .required(let entity): results = [try scanResult(try lookup(entity), aspect: .required)]
            case .types(let entity): results = [try scanResult(try lookup(entity), aspect: .types)]
            case .validationRules(let entity): results = [try scanResult(try lookup(entity), aspect: .validation)]
            case .relationships(let entity): results = try relationships(try lookup(entity))
            case .toManyCounts(let entity): results = try toManyCounts(try lookup(entity))
            case .modelHash(let expected): results = [try modelHash(expected)]
            case .assertion(let assertion): results = [try self.assertion(assertion)]
            case .record(let record): results = [try self.record(record)]
            case .checksum(let entity, let attributes, let expected):
                results = [try checksum(entity, attributes, expected)]
            }
        } catch {
            let entity = check.entityName
            let name = entity.map { "\(check.kind) \($0)" } ?? check.kind
            let message = (error as? FerryError).map { $0.location == nil ? $0.message : $0.description } ?? "\(error)"
            results = [CheckResult(check: check.kind, name: name, entity: entity, outcome: .error, message: message)]
        }
        // Results timed on their own keep their time; the rest share the check's time.
        let untimed = results.indices.filter { results[$0].elapsedSeconds == 0 }
        if !untimed.isEmpty {
            let share = Verifier.seconds(since: started) / Double(untimed.count)
            for index in untimed { results[index].elapsedSeconds = share }
        }
        return results
    }

    private func lookup(_ name: String) throws -> EntityDescription {
        guard let entity = model.entity(named: name) else {
            throw FerryError(
                .verification,
                "model \(model.name) has no entity '\(name)'\(Suggestions.didYouMean(name, in: model.entityNames))")
        }
        return entity
    }

    /// The rows of `entity` (its table, restricted to it when shared: ``StoreLayout/quotedSource(for:)``).
    private func table(_ entity: EntityDescription) -> String { layout.quotedSource(for: entity) }

    private func quote(_ identifier: String) -> String { layout.dialect.quote(identifier) }

    /// `t0.<column>` of the attribute named `attribute` of `entity`.
    private func column(_ attribute: String, of entity: EntityDescription) -> String {
        "t0." + layout.quotedColumn(forAttribute: attribute, in: entity)
    }

    /// The entity's row count, counted once per session (all checks read in one transaction).
    private func rowCount(_ entity: EntityDescription) throws -> Int {
        if let rows = rowCounts[entity.name] { return rows }
        let rows = Int(try connection.scalar(layout.objectCountQuery(for: entity))?.int64 ?? 0)
        rowCounts[entity.name] = rows
        return rows
    }

    // MARK: Offending records

    /// The attribute that names records to users: the first single-attribute uniqueness constraint.
    func keyAttribute(of entity: EntityDescription) -> String? {
        entity.uniquenessConstraints.first { $0.count == 1 && entity.attribute(named: $0[0]) != nil }?.first
    }

    /// Up to `limit` records of `entity` (as `t0`) matching `condition`.
    private func offenders(
        _ entity: EntityDescription, where condition: String, _ arguments: [DatabaseValue] = [], problem: String?,
        limit: Int? = nil,
        orderBy: String? = nil
    ) throws -> [OffendingRecord] {
        let orderBy = orderBy ?? "t0.\(self.key)"
        let limit = limit ?? maxOffending
        guard limit > 0 else { return [] }
        let key = keyAttribute(of: entity)
        let keyColumn = key.map { column($0, of: entity) } ?? "NULL"
        let sql =
            "SELECT t0.\(self.key), \(keyColumn) FROM \(table(entity)) AS t0 WHERE \(condition) ORDER BY \(orderBy) LIMIT \(limit)"
        return try connection.rows(sql, arguments).map { row in
            OffendingRecord(
                entity: entity.name, primaryKey: row[0].int64, keyAttribute: key,
                keyValue: row[1].isNull ? nil : row[1].description,
                problem: problem)
        }
    }

    // MARK: Counts

    private func count(_ name: String, _ expectation: CountExpectation?, _ basis: String?) throws -> CheckResult {
        let entity = try lookup(name)
        let rows = try rowCount(entity)
        var measured: [String: MeasuredValue] = ["count": .integer(rows)]
        let suffix = basis.map { ", \($0)" } ?? ""
        guard let expectation else {
            return CheckResult(
                check: "count", name: "count \(name)", entity: name, outcome: .passed, measured: measured,
                message: "\(rows) rows")
        }
        measured["expected"] = .text(expectation.description)
        if expectation.accepts(rows, total: rows) {
            return CheckResult(
                check: "count", name: "count \(name)", entity: name, outcome: .passed, measured: measured,
                message: "\(rows) rows (expected \(expectation)\(suffix))")
        }
        return CheckResult(
            check: "count", name: "count \(name)", entity: name, outcome: .failed, measured: measured,
            message: "expected \(expectation) rows\(suffix), found \(rows)")
    }

    // MARK: PRAGMAs

    private func integrity(quick: Bool) throws -> CheckResult {
        let pragma = quick ? "quick_check" : "integrity_check"
        guard let sqlite else {
            return CheckResult(
                check: pragma, name: pragma, outcome: .skipped,
                message: "PostgreSQL has no \(pragma): the server checks its own pages (data_checksums) and constraints"
            )
        }
        let problems: [String]
        var elapsed = 0.0
        if let done = concurrent[quick]?.wait() {
            (problems, elapsed) = done
        } else {
            problems = try sqlite.rows("PRAGMA \(pragma)(100)").compactMap { $0.first?.text }.filter { $0 != "ok" }
        }
        let measured: [String: MeasuredValue] = ["problems": .integer(problems.count)]
        if problems.isEmpty && !quick { integrityPassed = true }
        if problems.isEmpty {
            return CheckResult(
                check: pragma, name: pragma, outcome: .passed, measured: measured, message: "ok",
                elapsedSeconds: elapsed)
        }
        let shown = problems.prefix(maxOffending).joined(separator: "; ")
        return CheckResult(
            check: pragma, name: pragma, outcome: .failed, measured: measured,
            message:
                "\(problems.count)\(problems.count >= 100 ? "+" : "") problem\(problems.count == 1 ? "" : "s"): \(shown)",
            elapsedSeconds: elapsed)
    }

    private func foreignKeys(_ name: String?) throws -> CheckResult {
        let entity = try name.map(lookup)
        let checkName = name.map { "foreign_key_check \($0)" } ?? "foreign_key_check"
        var total = 0
        var byTable: [String: Int] = [:]
        var sample: [(table: String, rowid: Int64?, parent: String)] = []
        func note(table: String, rowid: Int64?, parent: String) {
            total += 1
            byTable[table, default: 0] += 1
            if sample.count < maxOffending { sample.append((table, rowid, parent)) }
        }
        if let sqlite, let entity,
            OrderedForeignKeyProof(layout: layout).holds(forTable: layout.table(for: entity), on: sqlite)
        {
            // Proven in key order; the pragma below would only confirm it, row by row.
        } else if let sqlite {
            let statement = try sqlite.prepare(
                entity.map { "PRAGMA foreign_key_check(\(layout.quotedTable(for: $0)))" } ?? "PRAGMA foreign_key_check")
            while try statement.step() {
                note(
                    table: statement.text(at: 0) ?? "", rowid: statement.isNull(at: 1) ? nil : statement.int64(at: 1),
                    parent: statement.text(at: 2) ?? "")
            }
        } else {
            try ForeignKeyScan(model: model, layout: layout).forEachDangling(in: entity, on: connection, note)
        }
        let measured: [String: MeasuredValue] = ["violations": .integer(total)]
        if total == 0 {
            return CheckResult(
                check: "foreign_key_check", name: checkName, entity: name, outcome: .passed, measured: measured,
                message: "no dangling references")
        }
        var offending: [OffendingRecord] = []
        for item in sample {
            let problem = "refers to a missing \(item.parent)"
            if let described = model.entity(named: item.table), let rowid = item.rowid {
                offending += try offenders(
                    described, where: "t0.\(key) = ?", [.integer(rowid)], problem: problem, limit: 1)
            } else {
                offending.append(OffendingRecord(entity: item.table, primaryKey: item.rowid, problem: problem))
            }
        }
        let tables = byTable.sorted { $0.key < $1.key }.map { "\($0.value) in \($0.key)" }.joined(separator: ", ")
        return CheckResult(
            check: "foreign_key_check", name: checkName, entity: name, outcome: .failed, measured: measured,
            message: "\(total) dangling reference\(total == 1 ? "" : "s") (\(tables))", offending: offending)
    }

    // MARK: Uniqueness

    private func uniqueness(_ entity: EntityDescription) throws -> [CheckResult] {
        guard !entity.uniquenessConstraints.isEmpty else {
            return [
                CheckResult(
                    check: "unique", name: "unique \(entity.name)", entity: entity.name, outcome: .skipped,
                    message: "\(entity.name) has no uniqueness constraints")
            ]
        }
        var results: [CheckResult] = []
        for constraint in entity.uniquenessConstraints {
            let started = ContinuousClock.now
            let name = "unique \(entity.name)(\(constraint.joined(separator: ", ")))"
            if let index = try provingIndex(entity, constraint) {
                var result = CheckResult(
                    check: "unique", name: name, entity: entity.name, outcome: .passed,
                    measured: ["duplicate_values": 0, "rows": 0, "unique_index": .text(index)], message: "no duplicates"
                )
                result.elapsedSeconds = max(Verifier.seconds(since: started), 1e-9)
                results.append(result)
                continue
            }
            let columns = constraint.map { layout.quotedColumn(forAttribute: $0, in: entity) }
            let list = columns.joined(separator: ", ")
            let notNull = columns.map { "\($0) IS NOT NULL" }.joined(separator: " AND ")
            let duplicates =
                "SELECT \(list) FROM \(table(entity)) WHERE \(notNull) GROUP BY \(list) HAVING count(*) > 1"
            let row = try connection.rows(
                "SELECT count(*), coalesce(sum(n), 0) FROM (SELECT count(*) AS n FROM \(table(entity)) WHERE \(notNull) GROUP BY \(list) HAVING count(*) > 1) AS groups"
            ).first
            let groups = Int(row?[0].int64 ?? 0)
            let rows = Int(row?[1].int64 ?? 0)
            let measured: [String: MeasuredValue] = ["duplicate_values": .integer(groups), "rows": .integer(rows)]
            var result: CheckResult
            if groups == 0 {
                result = CheckResult(
                    check: "unique", name: name, entity: entity.name, outcome: .passed, measured: measured,
                    message: "no duplicates")
            } else {
                let qualified =
                    constraint.count == 1
                    ? "t0.\(columns[0])" : "(" + columns.map { "t0.\($0)" }.joined(separator: ", ") + ")"
                let offending = try offenders(
                    entity, where: "\(qualified) IN (\(duplicates))",
                    problem: "shares its \(constraint.joined(separator: ", ")) with another record",
                    orderBy: columns.map { "t0.\($0)" }.joined(separator: ", ") + ", t0.\(key)")
                result = CheckResult(
                    check: "unique", name: name, entity: entity.name, outcome: .failed, measured: measured,
                    message:
                        "\(groups) value\(groups == 1 ? "" : "s") of \(constraint.joined(separator: ", ")) \(groups == 1 ? "is" : "are") shared by \(rows) records",
                    offending: offending)
            }
            result.elapsedSeconds = max(Verifier.seconds(since: started), 1e-9)
            results.append(result)
        }
        return results
    }

    /// A unique index that proves `constraint` after a passed integrity_check, if any.
    ///
    /// SQLite's `PRAGMA integrity_check` (not `quick_check`) checks that every index holds
    /// exactly the entries of its table's rows and, for a UNIQUE index, that no two entries
    /// share a key without NULLs ("non-unique entry in index …"; a test keeps this promise in
    /// view). A UNIQUE, non-partial index over plain columns, all among the constraint's and all
    /// compared BINARY, then proves that no two rows share non-NULL values of the constraint's
    /// columns, which is what the GROUP BY query counts. Tables whose SQL declares any COLLATE
    /// (the GROUP BY would compare by it) always get the query.
    private func provingIndex(_ entity: EntityDescription, _ constraint: [String]) throws -> String? {
        guard integrityPassed, let connection = sqlite else { return nil }
        let tableName = layout.table(for: entity)
        let sql =
            try connection.scalar(
                "SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = ?", [.text(tableName)])?.text ?? ""
        guard !sql.uppercased().contains("COLLATE") else { return nil }
        let wanted = Set(constraint.map { layout.column(forAttribute: $0, in: entity) })
        let indexes = try connection.rows(
            "SELECT name FROM pragma_index_list(?) WHERE \"unique\" = 1 AND partial = 0", [.text(tableName)])
        for row in indexes {
            guard let index = row.first?.text else { continue }
            let keys = try connection.rows(
                "SELECT cid, name, coll FROM pragma_index_xinfo(?) WHERE key = 1", [.text(index)])
            let proves =
                !keys.isEmpty
                && keys.allSatisfy { key in
                    (key[safe: 0]?.int64 ?? -1) >= 0 && key[safe: 1]?.text.map(wanted.contains) == true
                        && key[safe: 2]?.text?.uppercased() == "BINARY"
                }
            if proves { return index }
        }
        return nil
    }

    // MARK: Required, types, validation (one scan per entity)

    private func scanResult(_ entity: EntityDescription, aspect: Probe.Aspect) throws -> CheckResult {
        let started = ContinuousClock.now
        if sqlite == nil, let refusal = Self.postgreSQLRefusal(of: aspect, entity: entity, started: started) {
            return refusal
        }
        let counts = try scan(entity)
        let mine = counts.filter { $0.probe.aspect == aspect }
        let kind = aspect.rawValue
        let name = "\(kind) \(entity.name)"
        guard !mine.isEmpty else {
            let reason: String
            switch aspect {
            case .required: reason = "\(entity.name) has no required attributes or relationships"
            case .types: reason = "\(entity.name) has no attributes"
            case .validation: reason = "\(entity.name) has no validation rules"
            }
            return CheckResult(
                check: kind, name: name, entity: entity.name, outcome: .skipped, message: reason,
                elapsedSeconds: max(Verifier.seconds(since: started), 1e-9))
        }
        let violations = mine.reduce(0) { $0 + $1.count }
        let rows = counts.first?.rows ?? 0
        var measured: [String: MeasuredValue] = ["rows": .integer(rows), "violations": .integer(violations)]
        let failing = mine.filter { $0.count > 0 }
        if failing.isEmpty {
            let what: String
            switch aspect {
            case .required: what = "\(mine.count) required propert\(mine.count == 1 ? "y" : "ies") set"
            case .types: what = "\(mine.count) attribute\(mine.count == 1 ? "" : "s") well-typed"
            case .validation: what = "\(mine.count) rule\(mine.count == 1 ? "" : "s") kept"
            }
            return CheckResult(
                check: kind, name: name, entity: entity.name, outcome: .passed, measured: measured,
                message: "\(rows) rows, \(what)",
                elapsedSeconds: max(Verifier.seconds(since: started), 1e-9))
        }
        var offending: [OffendingRecord] = []
        for item in failing where offending.count < maxOffending {
            measured[item.probe.measure] = .integer(item.count)
            if let found = item.offending {
                offending += found.prefix(maxOffending - offending.count)
                continue
            }
            offending += try offenders(
                entity, where: item.probe.condition, item.probe.arguments,
                problem: "\(item.probe.property) \(item.probe.problem)",
                limit: maxOffending - offending.count)
        }
        for item in failing { measured[item.probe.measure] = .integer(item.count) }
        let message = failing.map {
            "\($0.probe.property) \($0.probe.problem) in \($0.count) row\($0.count == 1 ? "" : "s")"
        }.joined(separator: "; ")
        return CheckResult(
            check: kind, name: name, entity: entity.name, outcome: .failed, measured: measured, message: message,
            elapsedSeconds: max(Verifier.seconds(since: started), 1e-9), offending: offending)
    }

    /// Runs (once) the entity's scan over every probe of every aspect asked for.
    private func scan(_ entity: EntityDescription) throws -> [ProbeCount] {
        if let done = scans[entity.name] { return done }
        let wanted = aspects[entity.name] ?? []
        // On PostgreSQL the types check is skipped (see postgreSQLRefusal) and validation rules
        // are checked in ferry (RuleScan); the required probes run in SQL on both backends.
        let probes = try Probe.probes(
            for: entity, model: model, layout: layout, aspects: sqlite == nil ? wanted.subtracting([.types]) : wanted)
        var result: [ProbeCount] = []
        if probes.isEmpty {
            scans[entity.name] = []
            return []
        }
        // One pass: SQLite computes the per-probe sums only for the rows some probe flags (none,
        // on a sound store), and tests every well-typed column of a row in one function call.
        let rows = try rowCount(entity)
        if sqlite == nil, probes.contains(where: { $0.rule != nil }) {
            let inSQL = probes.filter { $0.rule == nil }
            let sums =
                inSQL.isEmpty
                ? []
                : try connection.rows(
                    "SELECT \(inSQL.map { "count(CASE WHEN \($0.condition) THEN 1 END)" }.joined(separator: ", ")) FROM \(table(entity)) AS t0",
                    inSQL.flatMap(\.arguments)
                ).first ?? []
            let inFerry = probes.filter { $0.rule != nil }
            let found = try RuleScan(layout: layout, maxOffending: maxOffending).run(
                inFerry, of: entity, keyAttribute: keyAttribute(of: entity), on: connection)
            result =
                inSQL.enumerated().map {
                    ProbeCount(probe: $0.element, count: Int(sums[safe: $0.offset]?.int64 ?? 0), rows: rows)
                }
                + zip(inFerry, found).map {
                    ProbeCount(probe: $0.0, count: $0.1.count, rows: rows, offending: $0.1.offending)
                }
            scans[entity.name] = result
            return result
        }
        let sums = probes.map { "count(CASE WHEN \($0.condition) THEN 1 END)" }.joined(separator: ", ")
        let filter = Self.anyProbe(probes)
        let row =
            try connection.rows(
                "SELECT \(sums) FROM \(table(entity)) AS t0 WHERE \(filter.sql)",
                probes.flatMap(\.arguments) + filter.arguments
            ).first ?? []
        for (index, probe) in probes.enumerated() {
            result.append(ProbeCount(probe: probe, count: Int(row[safe: index]?.int64 ?? 0), rows: rows))
        }
        scans[entity.name] = result
        return result
    }

    /// A condition true for the rows at least one probe flags: the probes' own conditions, with
    /// the `ferry_well_typed` ones merged into one call per row (per ``WellTyped/maxColumns``).
    static func anyProbe(_ probes: [Probe]) -> (sql: String, arguments: [DatabaseValue]) {
        var conditions: [String] = []
        var arguments: [DatabaseValue] = []
        var typed: [(code: Character, column: String)] = []
        for probe in probes {
            if let code = probe.wellTypedCode, let column = probe.wellTypedColumn {
                typed.append((code, column))
            } else {
                conditions.append("(\(probe.condition))")
                arguments += probe.arguments
            }
        }
        var start = 0
        while start < typed.count {
            let chunk = typed[start..<min(start + WellTyped.maxColumns, typed.count)]
            let codes = String(chunk.map(\.code))
            conditions.append(
                "\(WellTyped.functionName)('\(codes)', \(chunk.map(\.column).joined(separator: ", "))) = 0")
            start += WellTyped.maxColumns
        }
        return (conditions.joined(separator: " OR "), arguments)
    }

    /// On PostgreSQL, what a scan check reports instead of scanning when it cannot run there
    /// (nil for the required check, which runs in SQL on both backends, and for validation rules,
    /// which ferry checks over the decoded values there).
    private static func postgreSQLRefusal(
        of aspect: Probe.Aspect, entity: EntityDescription, started: ContinuousClock.Instant
    ) -> CheckResult? {
        let name = "\(aspect.rawValue) \(entity.name)"
        switch aspect {
        case .required:
            return nil
        case .types:
            return CheckResult(
                check: aspect.rawValue, name: name, entity: entity.name, outcome: .skipped,
                message:
                    "PostgreSQL's typed columns hold only values of their type (\(entity.name)'s columns are typed as the model says)",
                elapsedSeconds: max(Verifier.seconds(since: started), 1e-9))
        case .validation:
            return nil
        }
    }

    // MARK: Relationships

    private func relationships(_ entity: EntityDescription) throws -> [CheckResult] {
        var results: [CheckResult] = []
        for relationship in entity.relationships {
            let started = ContinuousClock.now
            let name = "relationship \(entity.name).\(relationship.name)"
            guard let destination = model.entity(named: relationship.destination) else {
                results.append(
                    CheckResult(
                        check: "relationship", name: name, entity: entity.name, outcome: .error,
                        message: "destination '\(relationship.destination)' is not in the model"))
                continue
            }
            let inverse = model.inverse(of: relationship, in: entity)
            var result: CheckResult
            switch layout.storage(of: relationship, in: entity, model: model) {
            case .inverseForeignKey:
                continue  // checked from the side that holds the key
            case .foreignKey(let column):
                let col = "t0.\(quote(column))"
                let dangling =
                    "\(col) IS NOT NULL AND NOT EXISTS (SELECT 1 FROM \(table(destination)) AS d WHERE d.\(key) = \(col))"
                let row =
                    try connection.rows(
                        "SELECT count(\(col)), count(CASE WHEN \(dangling) THEN 1 END) FROM \(table(entity)) AS t0"
                    ).first ?? []
                let links = Int(row[safe: 0]?.int64 ?? 0)
                let missing = Int(row[safe: 1]?.int64 ?? 0)
                var shared = 0
                let oneToOne = inverse.map { !$0.isToMany } ?? false
                if oneToOne {
                    shared = Int(
                        try connection.scalar(
                            "SELECT count(*) FROM (SELECT \(quote(column)) FROM \(table(entity)) WHERE \(quote(column)) IS NOT NULL GROUP BY \(quote(column)) HAVING count(*) > 1) AS shared"
                        )?.int64 ?? 0)
                }
                // A one-to-one stored on both sides (Core Data's): each side's key must point back.
                let bothSides = CoreDataOneToOneMirror.pair(of: relationship, in: entity, model: model, layout: layout)
                let oneSided = bothSides.map { pair in
                    let back = "d.\(quote(pair.inverseColumn))"
                    return
                        "((\(col) IS NOT NULL AND EXISTS (SELECT 1 FROM \(table(pair.destination)) AS d WHERE d.\(key) = \(col) AND \(back) IS NOT t0.\(key))) OR (\(col) IS NULL AND EXISTS (SELECT 1 FROM \(table(pair.destination)) AS d WHERE \(back) = t0.\(key))))"
                }
                let disagreeing = try oneSided.map {
                    Int(try connection.scalar("SELECT count(*) FROM \(table(entity)) AS t0 WHERE \($0)")?.int64 ?? 0)
                }
                var measured: [String: MeasuredValue] = ["links": .integer(links), "dangling": .integer(missing)]
                if oneToOne { measured["shared"] = .integer(shared) }
                if let disagreeing { measured["one_sided"] = .integer(disagreeing) }
                if missing == 0 && shared == 0 && (disagreeing ?? 0) == 0 {
                    result = CheckResult(
                        check: "relationship", name: name, entity: entity.name, outcome: .passed, measured: measured,
                        message:
                            "\(links) link\(links == 1 ? "" : "s"), every one to an existing \(destination.name)\(oneToOne ? ", none shared" : "")\(bothSides == nil ? "" : ", each linked back")"
                    )
                } else {
                    var problems: [String] = []
                    var offending: [OffendingRecord] = []
                    if missing > 0 {
                        problems.append("\(missing) link\(missing == 1 ? "" : "s") to a missing \(destination.name)")
                        offending += try offenders(
                            entity, where: dangling,
                            problem: "\(relationship.name) refers to a missing \(destination.name)")
                    }
                    if shared > 0 {
                        problems.append(
                            "\(shared) \(destination.name) record\(shared == 1 ? " is" : "s are") linked from more than one \(entity.name) (one-to-one with \(destination.name).\(inverse?.name ?? ""))"
                        )
                        offending += try offenders(
                            entity,
                            where:
                                "\(col) IN (SELECT \(quote(column)) FROM \(table(entity)) WHERE \(quote(column)) IS NOT NULL GROUP BY \(quote(column)) HAVING count(*) > 1)",
                            problem: "shares its \(relationship.name) with another \(entity.name)",
                            limit: max(0, maxOffending - offending.count))
                    }
                    if let disagreeing, disagreeing > 0, let oneSided, let pair = bothSides {
                        problems.append(
                            "\(disagreeing) \(entity.name) record\(disagreeing == 1 ? "" : "s") and \(destination.name).\(pair.inverse.name) disagree (a one-to-one is stored on both sides: each \(relationship.name) must be linked back)"
                        )
                        offending += try offenders(
                            entity, where: oneSided,
                            problem:
                                "its \(relationship.name) is not linked back by \(destination.name).\(pair.inverse.name), or a \(destination.name) links it that its \(relationship.name) does not name",
                            limit: max(0, maxOffending - offending.count))
                    }
                    result = CheckResult(
                        check: "relationship", name: name, entity: entity.name, outcome: .failed, measured: measured,
                        message: problems.joined(separator: "; "), offending: offending)
                }
            case .joinTable(let link, let source, let target):
                // Report each join table once, from the side whose key column comes first by name,
                // and from the entity that declares the relationship: the join table holds the
                // links of its sub-entities too, which inherit it.
                guard source < target,
                    model.declaringEntity(ofProperty: relationship.name, in: entity).name == entity.name
                else { continue }
                let missingSource =
                    "NOT EXISTS (SELECT 1 FROM \(table(entity)) AS s WHERE s.\(key) = l.\(quote(source)))"
                let missingTarget =
                    "NOT EXISTS (SELECT 1 FROM \(table(destination)) AS d WHERE d.\(key) = l.\(quote(target)))"
                let row =
                    try connection.rows(
                        "SELECT count(*), count(CASE WHEN \(missingSource) THEN 1 END), count(CASE WHEN \(missingTarget) THEN 1 END) FROM \(quote(link)) AS l"
                    ).first ?? []
                let links = Int(row[safe: 0]?.int64 ?? 0)
                let badSource = Int(row[safe: 1]?.int64 ?? 0)
                let badTarget = Int(row[safe: 2]?.int64 ?? 0)
                var measured: [String: MeasuredValue] = [
                    "links": .integer(links), "missing_source": .integer(badSource),
                    "missing_target": .integer(badTarget),
                ]
                let unordered = try unpositionedLinks(
                    in: link, ordering: [(target, relationship.isOrdered), (source, inverse?.isOrdered == true)])
                if !unordered.isEmpty {
                    measured["unpositioned"] = .integer(unordered.reduce(0) { $0 + $1.count })
                    result = CheckResult(
                        check: "relationship", name: name, entity: entity.name, outcome: .failed, measured: measured,
                        message: unordered.map {
                            "\($0.count) link\($0.count == 1 ? "" : "s") of an ordered relationship without a position in \(link).\($0.column)"
                        }.joined(separator: "; "))
                } else if badSource == 0 && badTarget == 0 {
                    result = CheckResult(
                        check: "relationship", name: name, entity: entity.name, outcome: .passed, measured: measured,
                        message: "\(links) link\(links == 1 ? "" : "s") in \(link), both ends of each exist")
                } else {
                    let sample = try connection.rows(
                        "SELECT l.\(quote(source)), l.\(quote(target)), \(missingSource), \(missingTarget) FROM \(quote(link)) AS l WHERE \(missingSource) OR \(missingTarget) ORDER BY l.\(quote(source)), l.\(quote(target)) LIMIT \(maxOffending)"
                    )
                    let offending = sample.map { row in
                        let gone = [
                            row[2].int64 == 1 ? "\(entity.name) \(row[0])" : nil,
                            row[3].int64 == 1 ? "\(destination.name) \(row[1])" : nil,
                        ].compactMap { $0 }
                        return OffendingRecord(
                            entity: link, keyAttribute: "\(source),\(target)", keyValue: "\(row[0]),\(row[1])",
                            problem: "links a missing \(gone.joined(separator: " and "))")
                    }
                    var problems: [String] = []
                    if badSource > 0 {
                        problems.append("\(badSource) link\(badSource == 1 ? "" : "s") from a missing \(entity.name)")
                    }
                    if badTarget > 0 {
                        problems.append(
                            "\(badTarget) link\(badTarget == 1 ? "" : "s") to a missing \(destination.name)")
                    }
                    result = CheckResult(
                        check: "relationship", name: name, entity: entity.name, outcome: .failed, measured: measured,
                        message: problems.joined(separator: "; ") + " in \(link)", offending: offending)
                }
            }
            result.elapsedSeconds = max(Verifier.seconds(since: started), 1e-9)
            results.append(result)
        }
        if results.isEmpty {
            return [
                CheckResult(
                    check: "relationship", name: "relationship \(entity.name)", entity: entity.name, outcome: .skipped,
                    message: "\(entity.name) stores no relationships of its own")
            ]
        }
        return results
    }

    /// In a Core Data store, the links of an ordered many-to-many's join table that have no
    /// position in its `Z_FOK_` column (`ordering`: each key column and whether the side it
    /// orders is ordered), by order column; empty elsewhere.
    private func unpositionedLinks(
        in table: String, ordering: [(column: String, ordered: Bool)]
    ) throws -> [(column: String, count: Int)] {
        guard layout.engine.capabilities.orderedToMany else { return [] }
        let columns = Set(
            try connection.rows("SELECT name FROM pragma_table_info(?)", [.text(table)]).compactMap {
                $0.first?.text?.uppercased()
            })
        var found: [(column: String, count: Int)] = []
        for (column, ordered) in ordering where ordered {
            let order = CoreDataLayout.orderColumn(forJoinColumn: column)
            guard columns.contains(order) else { continue }
            let count = Int(
                try connection.scalar(
                    "SELECT count(*) FROM \(layout.dialect.quote(table)) WHERE \(layout.dialect.quote(order)) IS NULL")?
                    .int64 ?? 0)
            if count > 0 { found.append((order, count)) }
        }
        return found
    }

    private func toManyCounts(_ entity: EntityDescription) throws -> [CheckResult] {
        var results: [CheckResult] = []
        for relationship in entity.relationships
        where relationship.isToMany && (relationship.minCount != nil || relationship.maxCount != nil) {
            let started = ContinuousClock.now
            let name = "to_many_count \(entity.name).\(relationship.name)"
            let countSQL: String
            switch layout.storage(of: relationship, in: entity, model: model) {
            case .inverseForeignKey(let destinationTable, let column):
                countSQL = "(SELECT count(*) FROM \(quote(destinationTable)) AS r WHERE r.\(quote(column)) = t0.\(key))"
            case .joinTable(let link, let sourceColumn, _):
                countSQL = "(SELECT count(*) FROM \(quote(link)) AS r WHERE r.\(quote(sourceColumn)) = t0.\(key))"
            case .foreignKey:
                continue
            }
            var bounds: [String] = []
            var conditions: [String] = []
            if let min = relationship.minCount {
                conditions.append("\(countSQL) < \(min)")
                bounds.append("at least \(min)")
            }
            if let max = relationship.maxCount {
                conditions.append("\(countSQL) > \(max)")
                bounds.append("at most \(max)")
            }
            let condition = conditions.joined(separator: " OR ")
            let violations = Int(
                try connection.scalar("SELECT count(*) FROM \(table(entity)) AS t0 WHERE \(condition)")?.int64 ?? 0)
            let expected = bounds.joined(separator: " and ")
            let measured: [String: MeasuredValue] = ["violations": .integer(violations), "expected": .text(expected)]
            var result: CheckResult
            if violations == 0 {
                result = CheckResult(
                    check: "to_many_count", name: name, entity: entity.name, outcome: .passed, measured: measured,
                    message: "every \(entity.name) has \(expected) \(relationship.name)")
            } else {
                result = CheckResult(
                    check: "to_many_count", name: name, entity: entity.name, outcome: .failed, measured: measured,
                    message:
                        "\(violations) \(entity.name) record\(violations == 1 ? " does" : "s do") not have \(expected) \(relationship.name)",
                    offending: try offenders(
                        entity, where: condition, problem: "\(relationship.name) count out of range"))
            }
            result.elapsedSeconds = max(Verifier.seconds(since: started), 1e-9)
            results.append(result)
        }
        if results.isEmpty {
            return [
                CheckResult(
                    check: "to_many_count", name: "to_many_count \(entity.name)", entity: entity.name,
                    outcome: .skipped, message: "\(entity.name) has no to-many relationship with a min or max count")
            ]
        }
        return results
    }

    // MARK: Model hash

    private func modelHash(_ expected: ObjectModel?) throws -> CheckResult {
        let name = "model_hash"
        guard layout.bookkeeping != nil else {
            // A store another tool made (Core Data's): its version was matched when it was opened.
            return CheckResult(
                check: name, name: name, outcome: .skipped,
                message:
                    "the store records no ferry model hash (not a ferry store); it was read with model \(model.name) version \(model.version), the version it matched when opened"
            )
        }
        guard let metadata = try StoreMetadata.read(from: connection, layout: layout) else {
            return CheckResult(
                check: name, name: name, outcome: .failed,
                message: "the store has no ferry metadata (\(layout.bookkeeping?.metadata ?? "no metadata table"))")
        }
        var measured: [String: MeasuredValue] = [
            "model_hash": .text(metadata.modelHash), "model": .text(metadata.modelName),
            "version": .text(metadata.modelVersion),
        ]
        var problems: [String] = []
        if let recorded = metadata.model {
            if recorded.versionHash != metadata.modelHash {
                problems.append(
                    "the store claims model hash \(metadata.modelHash.prefix(12)) but its recorded model \(recorded.name) version \(recorded.version) hashes to \(recorded.versionHash.prefix(12))"
                )
            }
            let recordedHashes = recorded.entityHashes
            let differing = Set(recordedHashes.keys).union(metadata.entityHashes.keys).filter {
                recordedHashes[$0] != metadata.entityHashes[$0]
            }.sorted()
            if !differing.isEmpty {
                problems.append(
                    "entity hashes in \(layout.bookkeeping?.entities ?? "the store") differ from the recorded model for \(differing.joined(separator: ", "))"
                )
            }
        } else {
            problems.append("the store records no readable model (model_json)")
        }
        if let expected {
            measured["expected_hash"] = .text(expected.versionHash)
            if expected.versionHash != metadata.modelHash {
                problems.append(
                    "the store is at model \(metadata.modelName) version \(metadata.modelVersion) (hash \(metadata.modelHash.prefix(12))), not model \(expected.name) version \(expected.version) (hash \(expected.versionHash.prefix(12)))"
                )
            }
        }
        if problems.isEmpty {
            return CheckResult(
                check: name, name: name, outcome: .passed, measured: measured,
                message:
                    "model \(metadata.modelName) version \(metadata.modelVersion), hash \(metadata.modelHash.prefix(12))"
            )
        }
        return CheckResult(
            check: name, name: name, outcome: .failed, measured: measured, message: problems.joined(separator: "; "))
    }

    // MARK: Assertions, records, checksums

    private func assertion(_ assertion: PredicateAssertion) throws -> CheckResult {
        let entity = try lookup(assertion.entity)
        let name = "assertion \(entity.name): \(assertion.predicate)"
        let predicate = try Predicate(format: assertion.predicate, location: assertion.location)
        let compiled = try Self.exactSelection(
            predicate, of: entity, connection: connection, model: model, layout: layout)
        let row =
            try connection.rows(
                "SELECT count(*), count(CASE WHEN \(compiled.sql) THEN 1 END) FROM \(compiled.from)", compiled.arguments
            ).first ?? []
        let total = Int(row[safe: 0]?.int64 ?? 0)
        let matching = Int(row[safe: 1]?.int64 ?? 0)
        let measured: [String: MeasuredValue] = [
            "matching": .integer(matching), "rows": .integer(total),
            "expected": .text(assertion.expectation.description),
        ]
        if assertion.expectation.accepts(matching, total: total) {
            return CheckResult(
                check: "assertion", name: name, entity: entity.name, outcome: .passed, measured: measured,
                message: "\(matching) of \(total) rows match (expected \(assertion.expectation))")
        }
        let offending =
            assertion.expectation.isUpperBound
            ? try offenders(
                entity, where: compiled.sql, compiled.arguments, problem: "matches '\(assertion.predicate)'") : []
        return CheckResult(
            check: "assertion", name: name, entity: entity.name, outcome: .failed, measured: measured,
            message:
                "\(matching) of \(total) \(entity.name) rows match '\(assertion.predicate)', expected \(assertion.expectation)",
            offending: offending)
    }

    /// The objects `predicate` selects on PostgreSQL, as SQL over `t0`: the predicate's own SQL
    /// when PostgreSQL computes all of it, else the keys ferry selected (``PredicateFilter``).
    private static func exactSelection(
        _ predicate: Predicate, of entity: EntityDescription, connection: any DatabaseConnection, model: ObjectModel,
        layout: any StoreLayout
    ) throws -> PredicateSQL {
        let filter = try predicate.filter(for: entity, model: model, layout: layout)
        if filter.isExact { return filter.sql }
        let select = { try connection.keys(of: entity, matching: predicate, model: model, layout: layout) }
        let keys = connection.isInTransaction ? try select() : try connection.readTransaction(select)
        let among = layout.dialect.among(keys, key: "t0.\(layout.dialect.quote(layout.keyColumn))")
        return layout.selection(of: entity, alias: "t0", where: among.sql, arguments: among.arguments)
    }

    /// A date expected to the millisecond matches an instant within that millisecond (a Core Data
    /// date's sub-millisecond digits); an expected date with more digits must match exactly.
    private static func sameMillisecond(_ actual: Value, expected: Value) -> Bool {
        guard case .date(let instant) = actual, case .date(let wanted) = expected, wanted.isWholeMilliseconds else {
            return false
        }
        return instant.milliseconds == wanted.milliseconds
    }

    private func record(_ expectation: RecordExpectation) throws -> CheckResult {
        let entity = try lookup(expectation.entity)
        let name = "record \(entity.name)(\(expectation.keyDescription))"
        var conditions: [String] = []
        var arguments: [DatabaseValue] = []
        for item in expectation.key + expectation.expected where entity.attribute(named: item.attribute) == nil {
            throw FerryError(
                .verification,
                "'\(entity.name)' has no attribute '\(item.attribute)'\(Suggestions.didYouMean(item.attribute, in: entity.attributes.map(\.name)))",
                at: expectation.location)
        }
        for item in expectation.key {
            if item.value.isNull {
                conditions.append("\(column(item.attribute, of: entity)) IS NULL")
            } else {
                conditions.append("\(column(item.attribute, of: entity)) = ?")
                arguments.append(layout.valueCoding.encode(item.value))
            }
        }
        let columns = ["t0.\(key)"] + expectation.expected.map { column($0.attribute, of: entity) }
        let where_ = conditions.isEmpty ? "1 = 1" : conditions.joined(separator: " AND ")
        let rows = try connection.rows(
            "SELECT \(columns.joined(separator: ", ")) FROM \(table(entity)) AS t0 WHERE \(where_) LIMIT 2", arguments)
        guard rows.count == 1, let row = rows.first else {
            let message =
                rows.isEmpty
                ? "no \(entity.name) with \(expectation.keyDescription)"
                : "more than one \(entity.name) with \(expectation.keyDescription)"
            return CheckResult(
                check: "record", name: name, entity: entity.name, outcome: .failed,
                measured: ["found": .integer(rows.count)], message: message)
        }
        var mismatches: [String] = []
        for (index, item) in expectation.expected.enumerated() {
            guard let attribute = entity.attribute(named: item.attribute) else { continue }
            let actual = layout.valueCoding.decode(row[index + 1], as: attribute.type)
            let same =
                actual == item.value
                || (AttributeValidator.compare(Self.canonical(actual), Self.canonical(item.value)) == 0)
                || Self.sameMillisecond(actual, expected: item.value)
            if !same {
                mismatches.append(
                    "\(item.attribute) is \(RecordExpectation.render(actual)), expected \(RecordExpectation.render(item.value))"
                )
            }
        }
        let measured: [String: MeasuredValue] = ["found": 1, "mismatches": .integer(mismatches.count)]
        if mismatches.isEmpty {
            return CheckResult(
                check: "record", name: name, entity: entity.name, outcome: .passed, measured: measured,
                message: "\(expectation.expected.count) value\(expectation.expected.count == 1 ? "" : "s") as expected")
        }
        let record = OffendingRecord(
            entity: entity.name, primaryKey: row[0].int64,
            keyAttribute: expectation.key.map(\.attribute).joined(separator: ","),
            keyValue: expectation.key.map { $0.value.description }.joined(separator: ","),
            problem: "\(mismatches.count) value\(mismatches.count == 1 ? "" : "s") differ")
        return CheckResult(
            check: "record", name: name, entity: entity.name, outcome: .failed, measured: measured,
            message: "\(entity.name) with \(expectation.keyDescription): " + mismatches.joined(separator: "; "),
            offending: [record])
    }

    private static func canonical(_ value: Value) -> Value {
        if case .decimal(let text) = value, let canonical = DecimalText.canonical(text) { return .decimal(canonical) }
        return value
    }

    private func checksum(_ entity: String, _ attributes: [String], _ expected: EntityChecksum) throws -> CheckResult {
        let actual = try EntityChecksum.compute(
            connection: connection, model: model, layout: layout, entity: entity, attributes: attributes)
        let name = "checksum \(entity)(\(attributes.joined(separator: ", ")))"
        let measured: [String: MeasuredValue] = [
            "rows": .integer(actual.rows), "checksum": .text(actual.value), "expected_rows": .integer(expected.rows),
            "expected_checksum": .text(expected.value),
        ]
        if actual.matches(expected) {
            return CheckResult(
                check: "checksum", name: name, entity: entity, outcome: .passed, measured: measured,
                message: "\(actual.rows) rows, checksum \(actual.value) as before")
        }
        let what =
            actual.rows != expected.rows
            ? "\(actual.rows) rows, expected \(expected.rows)" : "checksum \(actual.value), expected \(expected.value)"
        return CheckResult(
            check: "checksum", name: name, entity: entity, outcome: .failed, measured: measured,
            message: "values changed: \(what)")
    }
}

extension Check {
    /// The entity a check is about, if any.
    var entityName: String? {
        switch self {
        case .count(let entity, _, _), .uniqueness(let entity), .required(let entity), .validationRules(let entity),
            .types(let entity),
            .relationships(let entity), .toManyCounts(let entity), .checksum(let entity, _, _):
            return entity
        case .foreignKeys(let entity): return entity
        case .assertion(let assertion): return assertion.entity
        case .record(let record): return record.entity
        case .integrity, .modelHash: return nil
        }
    }
}

extension Array {
    subscript(safe index: Int) -> Element? { indices.contains(index) ? self[index] : nil }
}

import FerryCore
import FerryFormats

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The import fast path: coerces fields straight from a ``ByteFieldReader``'s bytes and binds
/// them without building a `String`, a ``FieldValue`` or a ``SourceRecord`` per record.
///
/// It handles the common, clean case only. Whenever a value does not parse, breaks a rule, or
/// the record hits a constraint, it gives up (`.useGeneralPath`) *before* anything is written,
/// and the record goes through the general path, which produces the precise, located reason.
/// Both paths accept exactly the same values; the tests run every import fixture both ways.
extension ImportPlan {
    enum FastOutcome {
        case done(InsertOutcome)
        /// PostgreSQL: the record is staged; its outcome comes when the staged records are written.
        case staged
        case useGeneralPath
    }

    /// The SQLite inserter the fast path binds to: the runner takes the fast path only when the
    /// plan has one (``sqliteInserter`` supports direct binding).
    var inserter: BatchInserter {
        guard let sqliteInserter else { preconditionFailure("the import fast path runs on SQLite stores only") }
        return sqliteInserter
    }

    /// How a column is read on the fast path. Trivially copyable (no reference-counted payload),
    /// so reading it for every field costs no retain and release: a boolean's words, a date's
    /// pattern and a constant's value are in the column (``AttributeColumn``).
    enum FastKind {
        case string
        case integer(ClosedRange<Int64>)
        case double(isFloat: Bool)
        case decimal
        /// The column's ``AttributeColumn/trueWordBytes`` and ``AttributeColumn/falseWordBytes``.
        case bool
        case isoDate
        /// The column's ``AttributeColumn/datePattern``.
        case patternDate
        case uuid
        /// Through a String and ``Coercion`` (uri, json, binary, unix dates, …).
        case viaCoercion
        /// The column's constant (``Source/constant(_:)``).
        case constant
    }

    /// What the fast path reads of an attribute column for every record, as plain values (no
    /// reference counting on the per-field path; the column itself is read only on rarer paths).
    struct FastField {
        /// The source field, or -1 for a constant.
        var fieldIndex: Int
        var type: AttributeType
        var isOptional: Bool
        /// A quoted field is read differently (the column trims or has null words).
        var readsQuotedFieldsDifferently: Bool
        /// The column has validation rules beyond optionality: its validator must see each value.
        var checksRules: Bool
    }

    /// The per-field plan of `attributes`, with the inserter's `validators` (one per column).
    static func fastFields(for attributes: [AttributeColumn], validators: [AttributeValidator?]) -> [FastField] {
        attributes.enumerated().map { index, column in
            let fieldIndex: Int
            if case .field(let source, _) = column.source { fieldIndex = source } else { fieldIndex = -1 }
            return FastField(
                fieldIndex: fieldIndex, type: column.type, isOptional: column.attribute.isOptional,
                readsQuotedFieldsDifferently: column.readsQuotedFieldsDifferently,
                checksRules: validators[index]?.hasRules ?? false)
        }
    }

    /// Per-column fast-path plan; nil when the step cannot use the fast path at all.
    static func fastKinds(for attributes: [AttributeColumn]) -> [FastKind]? {
        var kinds: [FastKind] = []
        for column in attributes {
            if case .constant = column.source {
                kinds.append(.constant)
                continue
            }
            // Trimming, per-field null words and decimal commas take the coercion route for that column.
            if column.options.trim || !column.options.nullTokens.isEmpty
                || (column.options.decimalComma && column.type.isNumeric)
            {
                kinds.append(.viaCoercion)
                continue
            }
            switch column.type {
            case .string: kinds.append(.string)
            case .int16, .int32, .int64: kinds.append(.integer(column.type.integerRange ?? Int64.min...Int64.max))
            case .double: kinds.append(.double(isFloat: false))
            case .float: kinds.append(.double(isFloat: true))
            case .decimal: kinds.append(.decimal)
            case .bool:
                let asciiOnly = (column.options.trueWords.union(column.options.falseWords)).allSatisfy {
                    $0.utf8.allSatisfy { $0 < 0x80 }
                }
                if asciiOnly {
                    kinds.append(.bool)
                } else {
                    kinds.append(.viaCoercion)
                }
            case .date:
                // A time zone for zone-less dates takes the coercion route (one rule, Coercion.parseDateInstant).
                if column.options.timeZone != nil {
                    kinds.append(.viaCoercion)
                    continue
                }
                switch column.options.dateFormat {
                case .iso8601: kinds.append(.isoDate)
                case .pattern: kinds.append(.patternDate)
                default: kinds.append(.viaCoercion)
                }
            case .uuid: kinds.append(.uuid)
            case .binary, .uri, .json: kinds.append(.viaCoercion)
            }
        }
        return kinds
    }

    /// Inserts the reader's current (well-formed) record through the fast path: one routine for
    /// every ``ByteFieldReader`` (CSV, JSON, a read-ahead batch).
    func fastInsert<Reader: ByteFieldReader>(from reader: Reader, kinds: [FastKind]) throws -> FastOutcome {
        inserter.beginDirectRow()
        guard try coerceAttributes(from: reader, kinds: kinds, into: inserter) else { return .useGeneralPath }
        for offset in 0..<references.count {
            guard try bindReference(referenceKey(from: reader, offset), offset) else { return .useGeneralPath }
        }
        return try finishDirectRow()
    }

    /// Inserts a record whose attributes the read-ahead thread already coerced (see
    /// ``CoercedRows``): binds them, resolves the reference keys, writes the row.
    func fastInsert(coerced rows: CoercedRows, row: Int) throws -> FastOutcome {
        inserter.beginDirectRow()
        try rows.bind(row, to: inserter)
        for offset in 0..<references.count {
            guard try bindReference(rows.referenceKey(row, offset), offset) else { return .useGeneralPath }
        }
        return try finishDirectRow()
    }

    /// Coerces and validates the attribute columns of the reader's current record from its
    /// bytes into `sink`, one value per column in order; false when the record needs the
    /// general path. Reads nothing but the plan and the reader, so it may run on the reader's
    /// thread.
    ///
    /// Strings and numbers go through the byte parsers below (the general path sends both
    /// through `Coercion` as text); `true`/`false`, `null`, nested values and absent fields get
    /// exactly the general path's treatment (see ``ImportPlan/coerce(_:to:options:)`` and
    /// ``BatchInserter/insert(_:supplied:)``).
    ///
    /// `textValidated` says the caller already checked that every field's bytes are UTF-8
    /// (``RecordBatch`` does, as it copies them), so they are not checked twice.
    func coerceAttributes<Reader: ByteFieldReader, Sink: DirectRowSink>(
        from reader: Reader, kinds: [FastKind], into sink: Sink, textValidated: Bool = false
    ) throws -> Bool {
        let checkUTF8 = !(textValidated || reader.textIsValidUTF8)
        for index in 0..<kinds.count {
            let field = fastFields[index]
            // Only a column with rules needs its validator: for any other, a value is acceptable
            // unless it is a missing required one, which is checked where a value can be null.
            let validator = field.checksRules ? columnValidators[index] : nil
            let ok: Bool
            let kind = kinds[index]
            if case .constant = kind {
                guard case .constant(let value) = attributes[index].source else { return false }
                if let validator = columnValidators[index], validator.problem(with: value) != nil {
                    return false
                }
                try sink.bindDirect(value, column: index)
                continue
            }
            let fieldIndex = field.fieldIndex
            guard fieldIndex >= 0 else { return false }
            let fieldKind = reader.fieldKind(fieldIndex)
            switch fieldKind {
            case .absent:
                // Not supplied: the default, unvalidated, as `BatchInserter.insert` does; a
                // required attribute without one fails NOT NULL and takes the general path.
                try sink.bindDirect(columnDefaults[index] ?? .null, column: index)
                ok = true
            case .null:
                ok = try bindNull(column: index, validator: validator, into: sink)
            case .text, .quotedText, .number:
                // Only columns that trim or have null words read quoted fields differently.
                let literal = fieldKind == .quotedText && field.readsQuotedFieldsDifferently
                ok = try reader.withFieldBytes(fieldIndex) { bytes in
                    try bindField(
                        bytes, kind: kind, column: index, literal: literal, validator: validator, checkUTF8: checkUTF8,
                        into: sink)
                }
            case .true, .false:
                let flag = fieldKind == .true
                switch field.type {
                case .bool: ok = try bindValue(.bool(flag), column: index, validator: validator, into: sink)
                case .string:
                    ok = try bindValue(
                        .string(flag ? "true" : "false"), column: index, validator: validator, into: sink)
                case .json:
                    ok = try bindValue(.json(flag ? "true" : "false"), column: index, validator: validator, into: sink)
                default: return false
                }
            case .nested:
                switch field.type {
                case .json, .string:
                    let text = reader.withFieldBytes(fieldIndex) { String(decoding: $0, as: UTF8.self) }
                    ok = try bindValue(
                        field.type == .json ? .json(text) : .string(text), column: index, validator: validator,
                        into: sink)
                default: return false
                }
            }
            if !ok { return false }
        }
        return true
    }

    /// The key a reference field of the reader's current record gives, before it is resolved.
    enum ReferenceKey {
        /// Bind NULL: the key is null, or the field is absent under `missing: null`.
        case null
        case key(Value)
        /// The record needs the general path (absent under `missing: reject`, a key that does
        /// not coerce, invalid UTF-8).
        case generalPath
    }

    /// Coerces the current record's attributes and reference keys into a new row of `rows`
    /// (on the read-ahead thread); nil when the record needs the importing thread's paths.
    /// `textValidated`: every field's bytes are known to be UTF-8 (see
    /// ``coerceAttributes(from:kinds:into:textValidated:)``).
    func coerceRow<Reader: ByteFieldReader>(
        from reader: Reader, kinds: [FastKind], into rows: CoercedRows, textValidated: Bool = false
    ) -> Int? {
        rows.beginRow()
        guard (try? coerceAttributes(from: reader, kinds: kinds, into: rows, textValidated: textValidated)) == true
        else {
            rows.abandonRow()
            return nil
        }
        for offset in 0..<references.count {
            let key = referenceKey(from: reader, offset, textValidated: textValidated)
            if case .generalPath = key {
                rows.abandonRow()
                return nil
            }
            rows.addKey(key)
        }
        return rows.commitRow()
    }

    /// Coerces the key of the reference at `offset` (pure: may run on the reader's thread).
    func referenceKey<Reader: ByteFieldReader>(
        from reader: Reader, _ offset: Int, textValidated: Bool = false
    ) -> ReferenceKey {
        let reference = references[offset]
        let fieldKind = reader.fieldKind(reference.fieldIndex)
        if fieldKind == .absent { return reference.mapping.missing == .reject ? .generalPath : .null }
        if !(textValidated || reader.textIsValidUTF8) && fieldKind.hasBytes
            && !reader.withFieldBytes(reference.fieldIndex, UTF8Bytes.isValid)
        {
            return .generalPath
        }
        guard let value = reader.fieldValue(reference.fieldIndex),
            let key = try? Self.coerce(
                value, to: reference.resolver.matchAttribute.type,
                options: reference.options(quoted: fieldKind == .quotedText)
            ).get()
        else { return .generalPath }
        return key.isNull ? .null : .key(key)
    }

    /// Binds a non-null value after the checks `BatchInserter.insert` makes.
    @inline(__always)
    private func bindValue<Sink: DirectRowSink>(
        _ value: Value, column index: Int, validator: AttributeValidator?, into sink: Sink
    ) throws -> Bool {
        if let validator, validator.problem(with: value) != nil { return false }
        try sink.bindDirect(value, column: index)
        return true
    }

    /// Binds the primary key of the object a reference's key resolves to (NULL for a null key,
    /// or a missing object under `missing: null`); false when the record needs the general path.
    func bindReference(_ key: ReferenceKey, _ offset: Int) throws -> Bool {
        switch try resolve(key, offset) {
        case nil: return false
        case .some(nil): try inserter.bindDirect(.null, column: attributes.count + offset)
        case .some(let primaryKey?): try inserter.bindDirect(primaryKey, column: attributes.count + offset)
        }
        return true
    }

    /// What a reference's key resolves to: the primary key of its object, `.some(nil)` for NULL
    /// (a null key, or a missing object under `missing: null`), nil when the record needs the
    /// general path.
    @inline(__always)
    func resolve(_ key: ReferenceKey, _ offset: Int) throws -> Int64?? {
        switch key {
        case .generalPath:
            return nil
        case .null:
            return .some(nil)
        case .key(let key):
            let reference = references[offset]
            guard let primaryKey = try reference.resolver.resolve(key) else {
                return reference.mapping.missing == .null ? .some(nil) : nil
            }
            return primaryKey
        }
    }

    /// The records one ``MultiRowInsert`` of the step writes, or nil when the step writes them one
    /// by one: a nested or sync step, a conflict policy that decides per row (see
    /// ``BatchInserter/multiRowInsert()``), or a reference that may point to a record of the same
    /// import (which must be written before the next record resolves it).
    func rowsPerMultiRowInsert() throws -> Int? {
        guard let sqliteInserter, nested == nil, sync == nil, !references.contains(where: \.reachesOwnEntity) else {
            return nil
        }
        return try sqliteInserter.multiRowInsert()?.rowCount
    }

    /// Writes `count` (``rowsPerMultiRowInsert()``) records whose attributes the read-ahead
    /// thread coerced, rows `first…` of `rows`, with one statement: binds them, resolves their
    /// reference keys, writes them. Returns how many of the records, from the first, were
    /// inserted: `count`, or fewer when a constraint refused one (the records from it on were not
    /// written), or 0 when a key needs the general path (nothing was written). The caller takes
    /// the records not written one by one.
    func insertCoerced(_ rows: CoercedRows, first: Int, count: Int) throws -> Int {
        guard let insert = try inserter.multiRowInsert(), insert.rowCount == count else { return 0 }
        insert.begin()
        let written = try rows.withRows(from: first, count: count, boundTo: insert) {
            for row in 0..<count {
                for offset in 0..<references.count {
                    guard let primaryKey = try resolve(rows.referenceKey(first + row, offset), offset) else {
                        return 0
                    }
                    let column = attributes.count + offset
                    if let primaryKey {
                        try insert.bind(primaryKey, row: row, column: column)
                    } else {
                        try insert.bind(Value.null, row: row, column: column)
                    }
                }
            }
            return try insert.write()
        }
        if written > 0 { inserter.didWriteMultipleRows() }
        return written
    }

    /// Writes the directly bound row; a rejected row goes to the general path for its reason.
    func finishDirectRow() throws -> FastOutcome {
        let outcome = try inserter.finishDirectRow()
        if case .rejected = outcome { return .useGeneralPath }
        return .done(outcome)
    }

    @inline(__always)
    func bindNull<Sink: DirectRowSink>(
        column index: Int, validator: AttributeValidator?, into sink: Sink
    ) throws -> Bool {
        let value = columnDefaults[index] ?? .null
        if let validator, validator.problem(with: value) != nil { return false }
        if value.isNull && !fastFields[index].isOptional { return false }
        try sink.bindDirect(value, column: index)
        return true
    }

    @inline(__always)
    func bindField<Sink: DirectRowSink>(
        _ bytes: UnsafeBufferPointer<UInt8>, kind: FastKind, column index: Int, literal: Bool,
        validator: AttributeValidator?, checkUTF8: Bool, into sink: Sink
    ) throws -> Bool {
        switch kind {
        case .string:
            guard !checkUTF8 || UTF8Bytes.isValid(bytes) else { return false }
            if let validator, validator.hasRules {
                // Length and pattern rules are checked on the String, exactly as the general path does.
                let value = Value.string(String(decoding: bytes, as: UTF8.self))
                if validator.problem(with: value) != nil { return false }
            }
            try sink.bindDirect(utf8: bytes, column: index)
        case .integer(let range):
            guard let value = Self.parseInteger(bytes), range.contains(value) else { return false }
            if let validator, validator.hasRules, validator.problem(with: .integer(value)) != nil { return false }
            try sink.bindDirect(value, column: index)
        case .double(let isFloat):
            guard var value = Self.parseDouble(bytes) else { return false }
            if isFloat {
                let narrowed = Float(value)
                if narrowed.isInfinite && value.isFinite { return false }
                value = Double(narrowed)
            }
            if let validator, validator.hasRules, validator.problem(with: .double(value)) != nil { return false }
            try sink.bindDirect(value, column: index)
        case .decimal:
            guard Self.isCanonicalDecimal(bytes) else {
                return try bindViaCoercion(bytes, column: index, literal: literal, validator: validator, into: sink)
            }
            if let validator, validator.hasRules {
                if validator.problem(with: .decimal(String(decoding: bytes, as: UTF8.self))) != nil { return false }
            }
            try sink.bindDirect(utf8: bytes, column: index)
        case .bool:
            let column = attributes[index]
            let value: Bool
            if Self.matchesWord(bytes, column.trueWordBytes) {
                value = true
            } else if Self.matchesWord(bytes, column.falseWordBytes) {
                value = false
            } else {
                return false
            }
            if let validator, validator.hasRules, validator.problem(with: .bool(value)) != nil { return false }
            try sink.bindDirect(Int64(value ? 1 : 0), column: index)
        case .isoDate, .patternDate:
            let millis: Int64?
            if case .patternDate = kind {
                guard let pattern = attributes[index].datePattern else { return false }
                // Digits below the millisecond (nil here) take the general path, which keeps them.
                millis = pattern.parseWholeMilliseconds(bytes: bytes)
            } else {
                // Digits below the millisecond take the general path, which keeps them.
                if DateCoding.hasSubMillisecondDigits(bytes) { return false }
                millis = DateCoding.parseISO8601(bytes: bytes)
            }
            // Dates a store cannot hold take the general path, which rejects them with the reason.
            guard let millis, DateCoding.storableMilliseconds.contains(millis) else { return false }
            if let validator, validator.hasRules, validator.problem(with: .date(millis)) != nil { return false }
            try DateCoding.withFormatted(millis) { try sink.bindDirect(utf8: $0, column: index) }
        case .uuid:
            guard Self.isCanonicalUUID(bytes) else {
                return try bindViaCoercion(bytes, column: index, literal: literal, validator: validator, into: sink)
            }
            if let validator, validator.hasRules {
                if validator.problem(with: .uuid(String(decoding: bytes, as: UTF8.self))) != nil { return false }
            }
            try sink.bindDirect(utf8: bytes, column: index)
        case .viaCoercion:
            return try bindViaCoercion(bytes, column: index, literal: literal, validator: validator, into: sink)
        case .constant:
            return false
        }
        return true
    }

    private func bindViaCoercion<Sink: DirectRowSink>(
        _ bytes: UnsafeBufferPointer<UInt8>, column index: Int, literal: Bool, validator: AttributeValidator?,
        into sink: Sink
    ) throws -> Bool {
        guard UTF8Bytes.isValid(bytes) else { return false }
        let column = attributes[index]
        guard
            var value = try? Coercion.coerce(
                String(decoding: bytes, as: UTF8.self), to: column.type, options: column.options(quoted: literal)
            ).get()
        else { return false }
        if value.isNull {
            value = columnDefaults[index] ?? .null
            if value.isNull && !attributes[index].attribute.isOptional { return false }
        }
        if let validator, validator.problem(with: value) != nil { return false }
        try sink.bindDirect(value, column: index)
        return true
    }

    // MARK: - Byte parsers (must accept exactly what Coercion accepts, or less)

    /// `[+-]digits` without leading/trailing spaces; nil on overflow or anything else.
    @inline(__always)
    static func parseInteger(_ bytes: UnsafeBufferPointer<UInt8>) -> Int64? {
        var index = 0
        var negative = false
        if bytes.count > 0 && (bytes[0] == UInt8(ascii: "-") || bytes[0] == UInt8(ascii: "+")) {
            negative = bytes[0] == UInt8(ascii: "-")
            index = 1
        }
        guard index < bytes.count, bytes.count - index <= 19 else { return nil }
        var value: Int64 = 0
        while index < bytes.count {
            let digit = bytes[index] &- 48
            guard digit < 10 else { return nil }
            let (times, o1) = value.multipliedReportingOverflow(by: 10)
            let (sum, o2) =
                negative
                ? times.subtractingReportingOverflow(Int64(digit)) : times.addingReportingOverflow(Int64(digit))
            guard !o1, !o2 else { return nil }
            value = sum
            index += 1
        }
        return value
    }

    /// Plain decimal notation and exponents only (no inf/nan/hex: those take the general path).
    static func parseDouble(_ bytes: UnsafeBufferPointer<UInt8>) -> Double? {
        guard bytes.count > 0, bytes.count < 64 else { return nil }
        var sawDigit = false
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): sawDigit = true
            case UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"): continue
            default: return nil
            }
        }
        guard sawDigit else { return nil }
        return withUnsafeTemporaryAllocation(of: CChar.self, capacity: bytes.count + 1) { buffer -> Double? in
            for i in 0..<bytes.count { buffer[i] = CChar(bitPattern: bytes[i]) }
            buffer[bytes.count] = 0
            var end: UnsafeMutablePointer<CChar>? = nil
            guard let start = buffer.baseAddress else { return nil }
            let value = strtod(start, &end)
            guard let end, end - start == bytes.count, !value.isNaN, value.isFinite else { return nil }
            return value
        }
    }

    /// `-?(0|[1-9][0-9]*)(\.[0-9]*[1-9])?`, not `-0`.
    static func isCanonicalDecimal(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var index = 0
        if bytes.count > 0 && bytes[0] == UInt8(ascii: "-") { index = 1 }
        let negative = index == 1
        guard index < bytes.count, bytes[index] &- 48 < 10 else { return false }
        let leadingZero = bytes[index] == 48
        var integerDigits = 0
        while index < bytes.count, bytes[index] &- 48 < 10 {
            integerDigits += 1
            index += 1
        }
        if leadingZero && integerDigits > 1 { return false }
        if index == bytes.count { return !(negative && leadingZero) }
        guard bytes[index] == UInt8(ascii: ".") else { return false }
        index += 1
        guard index < bytes.count else { return false }
        while index < bytes.count {
            guard bytes[index] &- 48 < 10 else { return false }
            index += 1
        }
        return bytes[bytes.count - 1] != 48
    }

    static func isCanonicalUUID(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard bytes.count == 36 else { return false }
        for index in 0..<36 {
            let b = bytes[index]
            if index == 8 || index == 13 || index == 18 || index == 23 {
                guard b == UInt8(ascii: "-") else { return false }
            } else {
                guard (b >= 48 && b <= 57) || (b >= 97 && b <= 102) else { return false }
            }
        }
        return true
    }

    /// Case-insensitive (ASCII) comparison with lowercase words.
    @inline(__always)
    static func matchesWord(_ bytes: UnsafeBufferPointer<UInt8>, _ words: [[UInt8]]) -> Bool {
        outer: for word in words where word.count == bytes.count {
            for index in 0..<word.count {
                var b = bytes[index]
                if b >= 65 && b <= 90 { b |= 0x20 }
                if b != word[index] { continue outer }
            }
            return true
        }
        return false
    }
}

import FerryCore
import FerryFormats

/// The JSON fast path: like the CSV one (see `ImportPlan+FastPath.swift`), it coerces the
/// current object's fields straight from the reader's bytes and binds them, without a `String`,
/// a ``FieldValue`` or a ``SourceRecord`` per record.
///
/// Strings and numbers go through the same byte parsers as CSV fields (the general path sends
/// both through `Coercion` as text); `true`/`false`, `null`, nested values and absent keys get
/// exactly the general path's treatment (see ``ImportPlan/coerce(_:to:options:)`` and
/// ``BatchInserter/insert(_:supplied:)``). Anything unusual gives up before the row is written,
/// and the record takes the general path, which produces the precise, located reason.
extension ImportPlan {
    /// Inserts the JSON reader's current (well-formed) object through the fast path.
    func fastInsert(from fields: JSONObjectFields, kinds: [FastKind]) throws -> FastOutcome {
        inserter.beginDirectRow()
        for index in 0..<kinds.count {
            let column = attributes[index]
            let validator = inserter.validator(forColumn: index)
            let ok: Bool
            switch kinds[index] {
            case .constant(let value):
                if let validator, validator.problem(with: value) != nil { return .useGeneralPath }
                try inserter.bindDirect(value, column: index)
                ok = true
            default:
                guard case .field(let fieldIndex, _) = column.source else { return .useGeneralPath }
                switch fields.kind(fieldIndex) {
                case .absent:
                    // Not supplied: the default, unvalidated, as `BatchInserter.insert` does; a
                    // required attribute without one fails NOT NULL and takes the general path.
                    try inserter.bindDirect(inserter.defaultValue(forColumn: index) ?? .null, column: index)
                    ok = true
                case .null:
                    ok = try bindNull(column: index, validator: validator)
                case .string, .number:
                    let kind = kinds[index]
                    ok = try fields.withBytes(fieldIndex) { bytes in
                        try bindField(bytes, kind: kind, column: index, type: column.type, options: column.options, validator: validator)
                    }
                case .true, .false:
                    let flag = fields.kind(fieldIndex) == .true
                    switch column.type {
                    case .bool: ok = try bindValue(.bool(flag), column: index, validator: validator)
                    case .string: ok = try bindValue(.string(flag ? "true" : "false"), column: index, validator: validator)
                    case .json: ok = try bindValue(.json(flag ? "true" : "false"), column: index, validator: validator)
                    default: return .useGeneralPath
                    }
                case .nested:
                    switch column.type {
                    case .json, .string:
                        let text = fields.withBytes(fieldIndex) { String(decoding: $0, as: UTF8.self) }
                        ok = try bindValue(column.type == .json ? .json(text) : .string(text), column: index, validator: validator)
                    default: return .useGeneralPath
                    }
                }
            }
            if !ok { return .useGeneralPath }
        }
        for offset in 0..<references.count {
            let index = attributes.count + offset
            let reference = references[offset]
            guard let value = fields.value(reference.fieldIndex) else {
                if reference.mapping.missing == .reject { return .useGeneralPath }
                try inserter.bindDirect(.null, column: index)
                continue
            }
            guard let key = try? Self.coerce(value, to: reference.resolver.matchAttribute.type, options: reference.options).get(),
                try bindReference(key, reference, column: index)
            else { return .useGeneralPath }
        }
        return try finishDirectRow()
    }

    /// Binds a non-null value after the checks `BatchInserter.insert` makes.
    @inline(__always)
    private func bindValue(_ value: Value, column index: Int, validator: AttributeValidator?) throws -> Bool {
        if let validator, validator.problem(with: value) != nil { return false }
        try inserter.bindDirect(value, column: index)
        return true
    }
}

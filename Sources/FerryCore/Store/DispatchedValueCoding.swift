/// A store's value coding for the per-value loops (the row path of migrations, imports,
/// fetches): ferry's own coding is called directly, so those loops keep the speed of static
/// calls; any other goes through the protocol.
package enum DispatchedValueCoding {
    case ferry(FerryValueCoding)
    case other(any ValueCoding)

    package init(_ coding: any ValueCoding) {
        if let ferry = coding as? FerryValueCoding { self = .ferry(ferry) } else { self = .other(coding) }
    }

    @inline(__always)
    package func encode(_ value: Value) -> DatabaseValue {
        switch self {
        case .ferry(let coding): return coding.encode(value)
        case .other(let coding): return coding.encode(value)
        }
    }

    @inline(__always)
    package func bind(_ value: Value, to statement: Statement, at index: Int) throws {
        switch self {
        case .ferry(let coding): try coding.bind(value, to: statement, at: index)
        case .other(let coding): try coding.bind(value, to: statement, at: index)
        }
    }

    @inline(__always)
    package func decode(_ value: DatabaseValue, as type: AttributeType) -> Value {
        switch self {
        case .ferry(let coding): return coding.decode(value, as: type)
        case .other(let coding): return coding.decode(value, as: type)
        }
    }
}

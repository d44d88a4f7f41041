/// A value expression of a mapping file: how a destination attribute's value is computed from
/// the source object and the job's parameters.
///
/// ```swift
/// let expression = try Expression.parse(#"$source.first + " " + $source.last"#, location: here)
/// let bound = try expression.bind(source: customerV2, model: v2, parameters: ["region": .string("EU")])
/// try bound.check(resultFits: fullNameAttribute)
/// // Per row: the engine selects `bound.keyPaths` as columns and evaluates by slot.
/// let value = try bound.evaluate(on: row)
/// ```
///
/// The language is documented in `docs/expressions.md`.
///
/// The main entry points:
///
/// - ``parse(_:location:bareNamesAreAttributes:)``: parse the text.
/// - ``bind(source:model:parameters:now:)``: check key paths, parameters and types; compile.
/// - ``BoundExpression``: evaluate it per row, check its result against an attribute, compile it to SQL.
public struct Expression: Sendable {
    /// The expression as written.
    public var text: String { source.text }
    /// Where the expression's first character is.
    public var location: InputLocation { source.base }

    let source: ExpressionSource
    let root: ExpressionNode

    /// Parses an expression.
    ///
    /// - Parameters:
    ///   - text: the expression, e.g. `lowercase(trim($source.email))`.
    ///   - location: where its first character is in a mapping file; errors point at the
    ///     offending token's line and column from there.
    ///   - bareNamesAreAttributes: when true, a name that is not a function call is a key path of
    ///     the source object: `lowercase(email)` reads `$source.email`, `customer.name` reads
    ///     `$source.customer.name`. Batch updates' `set:` values and `ferry update --set` are
    ///     parsed this way; mapping files are not (there a bare name is an error).
    /// - Throws: `FerryError` with code `.invalidExpression`, located at the offending token.
    public static func parse(
        _ text: String, location: InputLocation? = nil, bareNamesAreAttributes: Bool = false
    ) throws(FerryError) -> Expression {
        let source = ExpressionSource(text, base: location)
        var parser = try ExpressionParser(source, bareNamesAreAttributes: bareNamesAreAttributes)
        return Expression(source: source, root: try parser.parse())
    }

    /// Checks the expression against the source entity and the parameters, infers its static type
    /// and compiles it for evaluation.
    ///
    /// - Parameters:
    ///   - entity: the entity `$source` is an object of, or nil when the mapping has no source
    ///     (then any `$source` key path is an error).
    ///   - model: the model `entity` belongs to (to follow to-one relationships).
    ///   - parameters: values of `$name` parameters (job or migration parameters).
    ///   - now: the value of `now()` in milliseconds since 1970, one per migration run; the
    ///     current time when nil.
    /// - Throws: `FerryError` with code `.invalidExpression` at the offending token: unknown key
    ///   paths, parameters and functions (with the closest name suggested), wrong argument counts
    ///   and types, invalid date patterns and regular expressions.
    public func bind(
        source entity: EntityDescription?, model: ObjectModel, parameters: [String: Value] = [:], now: Int64? = nil
    ) throws(FerryError) -> BoundExpression {
        var binder = ExpressionBinder(
            source: source, entity: entity, model: model, parameters: parameters,
            now: now ?? DateCoding.nowMilliseconds())
        let compiled = try binder.compile(root)
        return BoundExpression(
            source: source, resultType: compiled.type, keyPaths: binder.keyPaths, program: compiled.run,
            sqlTemplate: compiled.sql)
    }
}

/// The static type of an expression: a kind of value, and whether it may be nil.
public struct ExpressionType: Sendable, Hashable, CustomStringConvertible {
    /// The kinds of values expressions produce; each is one case of ``Value``.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// Only `nil` (the literal `nil`).
        case null = "nil"
        /// `integer`, `decimal`, `double`, `string`, `bool`, `date`, `uuid`, `uri`, `binary` and `json`: one per attribute type family.
        case integer, decimal, double, string, bool, date, uuid, uri, binary, json
    }

    /// The kind of value.
    public var kind: Kind
    /// True when evaluation may give nil.
    public var isOptional: Bool

    /// A type of `kind`, optional when `optional` is true (`null` always is).
    public init(_ kind: Kind, optional: Bool = false) {
        self.kind = kind
        self.isOptional = optional || kind == .null
    }

    /// The expression kind of an attribute type (`int16/32/64` → `integer`, `float` → `double`).
    public init(attributeType type: AttributeType, optional: Bool) {
        switch type {
        case .int16, .int32, .int64: self.init(.integer, optional: optional)
        case .decimal: self.init(.decimal, optional: optional)
        case .double, .float: self.init(.double, optional: optional)
        case .string: self.init(.string, optional: optional)
        case .bool: self.init(.bool, optional: optional)
        case .date: self.init(.date, optional: optional)
        case .uuid: self.init(.uuid, optional: optional)
        case .uri: self.init(.uri, optional: optional)
        case .binary: self.init(.binary, optional: optional)
        case .json: self.init(.json, optional: optional)
        }
    }

    /// `string`, `optional integer`, `nil`.
    public var description: String {
        kind == .null ? "nil" : (isOptional ? "optional " : "") + kind.rawValue
    }

    var isNumber: Bool { kind == .integer || kind == .decimal || kind == .double }
}

/// A `$source` key path an expression reads: the engine selects it once per row and hands its
/// value to ``ExpressionContext/value(atSlot:)`` under the index of this key path in
/// ``BoundExpression/keyPaths``.
public struct ExpressionKeyPath: Sendable, Hashable, CustomStringConvertible {
    /// The components after `$source`: to-one relationship names, then an attribute name.
    public var components: [String]
    /// The attribute the path ends at.
    public var attribute: AttributeDescription
    /// The entity that owns ``attribute``.
    public var entity: String
    /// True when the attribute or a relationship on the way is optional: the value may be nil.
    public var isOptional: Bool

    /// `customer.email`.
    public var description: String { components.joined(separator: ".") }
}

/// What an expression is evaluated on: the values of its key paths for one source object.
///
/// The engine resolves ``BoundExpression/keyPaths`` to columns of its `SELECT` once, then for each
/// row hands out values by slot index, without any lookup by name. Values must be in the
/// canonical form of the attribute's type (``Value/integer(_:)`` for integer attributes,
/// ``Value/decimal(_:)`` text for decimals, a ``Timestamp`` for dates, …).
public protocol ExpressionContext {
    /// The value of key path number `slot` of the bound expression (`.null` for nil).
    func value(atSlot slot: Int) -> Value
    /// Names the source object in runtime errors, e.g. `Customer 42`; nil when unknown.
    var objectDescription: String? { get }
}

extension ExpressionContext {
    /// Nil: the object is not named in errors.
    public var objectDescription: String? { nil }
}

/// An ``ExpressionContext`` over a dictionary from key path text (`customer.email`) to value,
/// for tests and one-off evaluation. Names are resolved to slots once, at initialisation.
public struct DictionaryExpressionContext: ExpressionContext {
    private let values: [Value]
    /// Names the source object in runtime errors; nil when not given.
    public let objectDescription: String?

    /// Values of `expression`'s key paths taken from `values`; missing keys are nil.
    public init(_ values: [String: Value], for expression: BoundExpression, objectDescription: String? = nil) {
        self.values = expression.keyPaths.map { values[$0.description] ?? .null }
        self.objectDescription = objectDescription
    }

    /// The value of key path number `slot`; `.null` past the end.
    public func value(atSlot slot: Int) -> Value {
        slot < values.count ? values[slot] : .null
    }
}

/// A compiled evaluation step: takes the context, gives a value or a runtime error.
typealias ExpressionProgram = @Sendable (any ExpressionContext) throws(FerryError) -> Value

/// An expression checked against a source entity and compiled: evaluate it per row, check its
/// result against a destination attribute, or compile it to SQL.
public struct BoundExpression: Sendable {
    let source: ExpressionSource
    /// The expression as written.
    public var text: String { source.text }
    /// The static type of the result.
    public let resultType: ExpressionType
    /// The `$source` key paths the expression reads, in slot order (each once).
    public let keyPaths: [ExpressionKeyPath]
    let program: ExpressionProgram
    let sqlTemplate: SQLTemplate?

    init(
        source: ExpressionSource, resultType: ExpressionType, keyPaths: [ExpressionKeyPath],
        program: @escaping ExpressionProgram, sqlTemplate: SQLTemplate?
    ) {
        self.source = source
        self.resultType = resultType
        self.keyPaths = keyPaths
        self.program = program
        self.sqlTemplate = sqlTemplate
    }

    /// Evaluates the expression on one source object.
    ///
    /// - Throws: `FerryError` with code `.validation` when a value cannot be computed
    ///   (`int("abc")`, division by zero, a date that does not match its pattern, integer
    ///   overflow), located at the failing sub-expression, naming it and the source object.
    @inline(__always)
    public func evaluate(on context: some ExpressionContext) throws(FerryError) -> Value {
        try program(context)
    }

    /// Checks that the result can be stored in `attribute` and returns an expression whose values
    /// are in the attribute's canonical form (integers become decimals for decimal attributes,
    /// integer ranges are checked for int16/int32, text is validated for uri and json).
    ///
    /// A string is never silently read as a number or date: wrap it in `int(…)`, `decimal(…)`,
    /// `double(…)`, `date(…)`, `bool(…)` or `uuid(…)`. A statically nil result for a non-optional
    /// attribute is an error.
    public func fitted(to attribute: AttributeDescription) throws(FerryError) -> BoundExpression {
        let run = try ExpressionFitting.fit(self, to: attribute)
        return BoundExpression(
            source: source, resultType: ExpressionType(attributeType: attribute.type, optional: resultType.isOptional),
            keyPaths: keyPaths,
            program: run, sqlTemplate: ExpressionFitting.sqlFits(resultType, attribute.type) ? sqlTemplate : nil)
    }

    /// Checks that the result can be stored in `attribute`; see ``fitted(to:)``.
    public func check(resultFits attribute: AttributeDescription) throws(FerryError) {
        _ = try fitted(to: attribute)
    }

    /// Checks that the result can be stored in an attribute of `type`; see ``fitted(to:)``.
    public func check(resultFits type: AttributeType, optional: Bool = true) throws(FerryError) {
        _ = try fitted(to: AttributeDescription(name: "value", type: type, isOptional: optional))
    }
}

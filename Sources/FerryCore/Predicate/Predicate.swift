/// A filter over the objects of one entity, written in Core Data's `NSPredicate` format syntax.
///
/// ```swift
/// let predicate = try Predicate(format: "status == %@ AND total > 100", arguments: ["paid"])
/// let checked = try predicate.bound(to: order, model: model) // key paths and literals checked
/// let keep = try predicate.evaluate(on: record)              // the same answer in memory
/// ```
///
/// The main entry points:
///
/// - ``init(format:arguments:location:)``: parse a format string.
/// - ``bound(to:model:)``: check key paths and literals against a model.
/// - ``evaluate(on:)``: evaluate on a record in memory.
public indirect enum Predicate: Sendable, Hashable {
    /// `TRUEPREDICATE` or `FALSEPREDICATE`.
    case constant(Bool)
    /// `lhs op rhs`, possibly with `ANY`/`ALL`/`NONE` and `[cd]` options.
    case comparison(Comparison)
    /// Every operand holds (`AND`, `&&`).
    case and([Predicate])
    /// At least one operand holds (`OR`, `||`).
    case or([Predicate])
    /// The operand does not hold (`NOT`, `!`).
    case not(Predicate)
}

/// A comparison of two expressions.
public struct Comparison: Sendable, Hashable {
    /// How a to-many key path on the left is quantified (`ANY`, `ALL`, `NONE`).
    public var modifier: ComparisonModifier
    /// The left operand.
    public var lhs: PredicateExpression
    /// The operator.
    public var op: ComparisonOperator
    /// The `[c]`/`[d]` options of a string comparison.
    public var options: StringOptions
    /// The right operand.
    public var rhs: PredicateExpression
    /// Where the operator is in the source (ignored by `==` and hashing).
    public var mark: SourceMark

    /// `lhs op rhs`, with its modifier, string options and source position.
    public init(
        _ lhs: PredicateExpression, _ op: ComparisonOperator, _ rhs: PredicateExpression,
        modifier: ComparisonModifier = .direct, options: StringOptions = [], mark: SourceMark = SourceMark()
    ) {
        self.modifier = modifier
        self.lhs = lhs
        self.op = op
        self.options = options
        self.rhs = rhs
        self.mark = mark
    }
}

/// How a comparison treats a to-many key path on its left.
public enum ComparisonModifier: String, Sendable, Hashable {
    /// No modifier: a to-many key path is read as `ANY`.
    case direct
    /// `ANY` / `SOME`: at least one element satisfies the comparison.
    case any
    /// `ALL`: every element satisfies it (true for an empty collection).
    case all
    /// `NONE`: no element satisfies it.
    case none
}

/// A comparison operator.
public enum ComparisonOperator: String, Sendable, Hashable, CaseIterable {
    /// `==`.
    case equal = "=="
    /// `!=`.
    case notEqual = "!="
    /// `<`.
    case less = "<"
    /// `<=`.
    case lessOrEqual = "<="
    /// `>`.
    case greater = ">"
    /// `>=`.
    case greaterOrEqual = ">="
    /// `BETWEEN {low, high}`, both inclusive.
    case between = "BETWEEN"
    /// `IN {…}`: equal to one of the list's values, or (on a to-many key path) contains the value.
    case `in` = "IN"
    /// `BEGINSWITH`: the text starts with the right operand.
    case beginsWith = "BEGINSWITH"
    /// `ENDSWITH`: the text ends with the right operand.
    case endsWith = "ENDSWITH"
    /// `CONTAINS`: the text contains the right operand, or a to-many collection contains the value.
    case contains = "CONTAINS"
    /// `LIKE`: a wildcard match (`*` any characters, `?` one).
    case like = "LIKE"
    /// `MATCHES`: an ICU regular expression the whole text must match.
    case matches = "MATCHES"

    /// True for the operators that only apply to text.
    public var isStringOperator: Bool {
        switch self {
        case .beginsWith, .endsWith, .contains, .like, .matches: return true
        default: return false
        }
    }

    /// True for `<`, `<=`, `>`, `>=` and `BETWEEN`.
    public var isOrdering: Bool {
        switch self {
        case .less, .lessOrEqual, .greater, .greaterOrEqual, .between: return true
        default: return false
        }
    }
}

/// The `[c]`, `[d]` and `[cd]` options of a string comparison.
public struct StringOptions: OptionSet, Sendable, Hashable {
    /// The option bits.
    public let rawValue: Int
    /// The options with these bits.
    public init(rawValue: Int) { self.rawValue = rawValue }
    /// `[c]`: case-insensitive (Unicode case folding: `ß` matches `SS`).
    public static let caseInsensitive = StringOptions(rawValue: 1)
    /// `[d]`: diacritic-insensitive (`é` matches `e`).
    public static let diacriticInsensitive = StringOptions(rawValue: 2)
}

/// A value in a comparison.
public indirect enum PredicateExpression: Sendable, Hashable {
    /// A literal: number, string, `YES`/`NO`, `nil`, a `CAST` to a date, or a `%@` argument.
    case constant(Value, SourceMark)
    /// `{a, b, c}` or a list given as an argument.
    case list([PredicateExpression], SourceMark)
    /// `customer.email`, `$item.quantity`.
    case keyPath(PredicateKeyPath)
    /// `$NAME`: a substitution variable, or a `SUBQUERY` iteration variable (the element itself).
    case variable(String, SourceMark)
    /// `items.@count`, `items.@sum.quantity`, `items.quantity.@max`, `SUBQUERY(…).@count`.
    case aggregate(AggregateFunction, collection: PredicateExpression, property: [String], SourceMark)
    /// `SUBQUERY(collection, $x, predicate)`: the elements of `collection` that satisfy `predicate`.
    case subquery(Subquery)

    /// Where the expression starts in the source.
    public var mark: SourceMark {
        switch self {
        case .constant(_, let mark), .list(_, let mark), .variable(_, let mark), .aggregate(_, _, _, let mark):
            return mark
        case .keyPath(let path): return path.marks.first ?? SourceMark()
        case .subquery(let subquery): return subquery.mark
        }
    }

    /// A literal value.
    public static func value(_ value: Value) -> PredicateExpression { .constant(value, SourceMark()) }
    /// A key path from the evaluated object, `a.b.c`.
    public static func key(_ path: String) -> PredicateExpression {
        let components = path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        return .keyPath(PredicateKeyPath(components))
    }
}

/// `@count`, `@sum`, `@avg`, `@min`, `@max`.
public enum AggregateFunction: String, Sendable, Hashable, CaseIterable {
    /// Count, sum, average, minimum and maximum.
    case count, sum, avg, min, max
}

/// A dotted key path, from the evaluated object or from a variable.
public struct PredicateKeyPath: Sendable, Hashable {
    /// What the first component is read from.
    public enum Root: Sendable, Hashable {
        /// The object the predicate is evaluated on.
        case object
        /// A `SUBQUERY` iteration variable.
        case variable(String)
    }
    /// What the first component is read from.
    public var root: Root
    /// The key path's components, `["customer", "email"]` for `customer.email`.
    public var components: [String]
    /// The source position of each component (and of the variable first, for variable roots).
    public var marks: [SourceMark]

    /// A key path of `components` from `root`.
    public init(root: Root = .object, _ components: [String], marks: [SourceMark] = []) {
        self.root = root
        self.components = components
        self.marks = marks
    }

    /// Key paths are equal when their roots and components are, wherever they were written.
    public static func == (lhs: PredicateKeyPath, rhs: PredicateKeyPath) -> Bool {
        lhs.root == rhs.root && lhs.components == rhs.components
    }

    /// Hashes the root and components, as `==` compares them.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(root)
        hasher.combine(components)
    }

    /// The position of component `index`, or of the whole path when unknown.
    func mark(ofComponent index: Int) -> SourceMark {
        let offset = root == .object ? 0 : 1
        if index + offset < marks.count { return marks[index + offset] }
        return marks.first ?? SourceMark()
    }

    /// `a.b.c` or `$x.a.b`.
    public var text: String {
        var parts = components
        if case .variable(let name) = root { parts.insert("$" + name, at: 0) }
        return parts.joined(separator: ".")
    }
}

/// `SUBQUERY(collection, $variable, predicate)`.
public struct Subquery: Sendable, Hashable {
    /// The collection iterated (a to-many key path).
    public var collection: PredicateExpression
    /// The iteration variable's name, without `$`.
    public var variable: String
    /// The condition each element must meet.
    public var predicate: Predicate
    /// Where `SUBQUERY` is in the source.
    public var mark: SourceMark

    /// `SUBQUERY(collection, $variable, predicate)`.
    public init(
        collection: PredicateExpression, variable: String, predicate: Predicate, mark: SourceMark = SourceMark()
    ) {
        self.collection = collection
        self.variable = variable
        self.predicate = predicate
        self.mark = mark
    }
}

/// Where a token was in the source, for error messages.
///
/// Marks never affect equality or hashing: `a == 1` parsed from two places is the same predicate.
public struct SourceMark: Sendable, Hashable {
    /// The token's location; nil when the predicate was built in code.
    public var location: InputLocation?
    /// A mark at `location`.
    public init(_ location: InputLocation? = nil) { self.location = location }
    /// Always true: marks take no part in equality.
    public static func == (lhs: SourceMark, rhs: SourceMark) -> Bool { true }
    /// Adds nothing: marks take no part in hashing.
    public func hash(into hasher: inout Hasher) {}
}

/// A value passed for a `%@`, `%d` or `%K` placeholder, or for a `$NAME` variable.
///
/// Literals make call sites short: `try Predicate(format: "age > %d AND name == %@", arguments: [18, "Ann"])`.
public enum PredicateArgument: Sendable, Hashable, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByBooleanLiteral, ExpressibleByNilLiteral, ExpressibleByArrayLiteral
{
    /// A value for `%@` (or `%d`, `%f`, …); a `.string` also serves `%K` as a key path.
    case value(Value)
    /// A collection for `IN %@` or `BETWEEN %@`.
    case list([Value])
    /// A key path for `%K`.
    case keyPath(String)

    /// A string value.
    public init(stringLiteral value: String) { self = .value(.string(value)) }
    /// An integer value.
    public init(integerLiteral value: Int64) { self = .value(.integer(value)) }
    /// A double value.
    public init(floatLiteral value: Double) { self = .value(.double(value)) }
    /// A boolean value.
    public init(booleanLiteral value: Bool) { self = .value(.bool(value)) }
    /// `nil`.
    public init(nilLiteral: ()) { self = .value(.null) }
    /// A list, for `IN %@`.
    public init(arrayLiteral elements: Value...) { self = .list(elements) }
}

extension Predicate {
    /// Every operand joined with `AND` (Core Data's `NSCompoundPredicate(andPredicateWithSubpredicates:)`).
    public static func all(_ predicates: [Predicate]) -> Predicate {
        predicates.count == 1 ? predicates[0] : .and(predicates)
    }

    /// Every operand joined with `OR`.
    public static func any(_ predicates: [Predicate]) -> Predicate {
        predicates.count == 1 ? predicates[0] : .or(predicates)
    }
}

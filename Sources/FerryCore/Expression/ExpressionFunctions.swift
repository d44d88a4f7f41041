import Foundation

/// An `NSRegularExpression` made once at bind time; it is immutable and documented as thread-safe.
final class CompiledRegex: @unchecked Sendable {
    let regex: NSRegularExpression
    init(_ regex: NSRegularExpression) { self.regex = regex }
}

extension ExpressionBinder {
    /// Every function name, for "did you mean" suggestions.
    static let functionNames: [String] = [
        "abs", "after", "after_last", "before", "before_last", "bool", "coalesce", "concat", "date", "decimal",
        "double",
        "format_date", "if", "int", "length", "lowercase", "max", "min", "now", "regex_replace", "replace", "round",
        "split",
        "string", "substring", "trim", "uppercase", "uuid",
    ]

    // MARK: - Argument checks

    private func arity(
        _ name: String, _ arguments: [ExpressionNode], _ node: ExpressionNode, _ range: ClosedRange<Int>,
        _ shape: String
    ) throws(FerryError) {
        guard range.contains(arguments.count) else {
            let count: String
            if range.lowerBound == range.upperBound {
                count = "\(range.lowerBound) argument\(range.lowerBound == 1 ? "" : "s")"
            } else if range.upperBound == Int.max {
                count = "\(range.lowerBound) or more arguments"
            } else if range.upperBound == range.lowerBound + 1 {
                count = "\(range.lowerBound) or \(range.upperBound) arguments"
            } else {
                count = "\(range.lowerBound) to \(range.upperBound) arguments"
            }
            throw error("\(name)() takes \(count) (\(shape)) but was given \(arguments.count)", at: node.mark)
        }
    }

    private func require(
        _ compiled: CompiledExpression, _ node: ExpressionNode, _ kinds: Set<ExpressionType.Kind>, _ function: String,
        _ index: Int, _ what: String, hint: String = ""
    ) throws(FerryError) {
        guard kinds.contains(compiled.type.kind) || compiled.type.kind == .null else {
            throw error(
                "\(function)() needs \(what) as argument \(index + 1), but \(describe(node, compiled)) is not\(hint)",
                at: node.mark)
        }
    }

    private static let textKinds: Set<ExpressionType.Kind> = [.string, .uri, .uuid, .json]
    private static let numberKinds: Set<ExpressionType.Kind> = [.integer, .decimal, .double]

    private func requireText(
        _ c: CompiledExpression, _ node: ExpressionNode, _ function: String, _ index: Int
    ) throws(FerryError) {
        try require(c, node, Self.textKinds, function, index, "a string", hint: "; convert it with string(…)")
    }

    private func requireInteger(
        _ c: CompiledExpression, _ node: ExpressionNode, _ function: String, _ index: Int
    ) throws(FerryError) {
        try require(c, node, [.integer], function, index, "an integer")
    }

    /// A literal string argument (patterns and formats are fixed when the expression is bound).
    private func literalText(
        _ c: CompiledExpression, _ node: ExpressionNode, _ function: String, _ index: Int, _ what: String
    ) throws(FerryError) -> String {
        guard case .string(let text)? = c.constant else {
            throw error(
                "\(function)() needs \(what) as argument \(index + 1) written as a string literal", at: node.mark)
        }
        return text
    }

    /// A program for a function of one text argument that gives nil for nil.
    private func textFunction(
        _ argument: CompiledExpression, _ site: ExpressionSite, type: ExpressionType.Kind = .string,
        sql: SQLTemplate? = nil, _ body: @escaping @Sendable (String) -> Value
    ) -> CompiledExpression {
        let run = argument.run
        return CompiledExpression(
            type: ExpressionType(type, optional: argument.type.isOptional),
            run: { c throws(FerryError) in
                let value = try run(c)
                guard let text = ExpressionRuntime.text(value) else {
                    return try ExpressionRuntime.nullOrFail(value, "a string", site, c)
                }
                return body(text)
            }, sql: sql)
    }

    /// A conversion: nil stays nil, a failure is a runtime error with its reason.
    private func conversion(
        _ argument: CompiledExpression, _ site: ExpressionSite, _ kind: ExpressionType.Kind,
        _ convert: @escaping @Sendable (Value) -> Result<Value, CoercionFailure>
    ) -> CompiledExpression {
        let run = argument.run
        return CompiledExpression(
            type: ExpressionType(kind, optional: argument.type.isOptional),
            run: { c throws(FerryError) in
                switch convert(try run(c)) {
                case .success(let value): return value
                case .failure(let failure): throw site.fail(failure.reason, c)
                }
            })
    }

    // MARK: - Calls

    mutating func compileCall(
        _ name: String, _ argumentNodes: [ExpressionNode], _ node: ExpressionNode
    ) throws(FerryError) -> CompiledExpression {
        guard Self.functionNames.contains(name) else {
            var message = "unknown function '\(name)'"
            if let match = Suggestions.closest(to: name, in: Self.functionNames) {
                message += "; did you mean '\(match)'?"
            } else {
                message += "; see docs/expressions.md for the functions"
            }
            throw error(message, at: node.mark)
        }
        var args: [CompiledExpression] = []
        for argument in argumentNodes { args.append(try compile(argument)) }
        let nodes = argumentNodes
        let site = ExpressionSite(source, node)

        switch name {
        case "lowercase", "uppercase", "trim", "length":
            try arity(name, nodes, node, 1...1, "text")
            try requireText(args[0], nodes[0], name, 0)
            // The SQL form calls the same Swift function (ExpressionSQLFunctions), for strings.
            let argumentSQL = args[0].type.kind == .string ? args[0].sql : nil
            let sql: (ExpressionSQLFunctions.Name) -> SQLTemplate? = { function in
                argumentSQL.map { .function(function, [$0]) }
            }
            switch name {
            case "lowercase":
                return textFunction(args[0], site, sql: sql(.lowercase)) { .string(ExpressionRuntime.lowercase($0)) }
            case "uppercase":
                return textFunction(args[0], site, sql: sql(.uppercase)) { .string(ExpressionRuntime.uppercase($0)) }
            case "trim":
                return textFunction(args[0], site, sql: sql(.trim)) { .string(ExpressionRuntime.trim($0)) }
            default: return textFunction(args[0], site, type: .integer) { .integer(Int64($0.count)) }
            }

        case "split":
            try arity(name, nodes, node, 2...3, "text, separator[, index]")
            try requireText(args[0], nodes[0], name, 0)
            try requireText(args[1], nodes[1], name, 1)
            if case .string("")? = args[1].constant {
                throw error("split() needs a non-empty separator", at: nodes[1].mark)
            }
            let text = args[0].run
            let separator = args[1].run
            guard args.count == 3 else {
                return CompiledExpression(
                    type: ExpressionType(.json, optional: args[0].type.isOptional || args[1].type.isOptional),
                    run: { c throws(FerryError) in
                        let value = try text(c)
                        let sep = try separator(c)
                        guard let s = ExpressionRuntime.text(value), let p = ExpressionRuntime.text(sep) else {
                            return .null
                        }
                        guard !p.isEmpty else { throw site.fail("the separator is empty", c) }
                        return .json(
                            ExpressionRuntime.jsonArray(s.split(separator: p, omittingEmptySubsequences: false)))
                    })
            }
            try requireInteger(args[2], nodes[2], name, 2)
            let index = args[2].run
            // SQL only with a non-empty literal separator: the evaluation cannot fail then.
            var sql: SQLTemplate? = nil
            if args[0].type.kind == .string, args[2].type.kind == .integer, case .string(let p)? = args[1].constant,
                !p.isEmpty, let textSQL = args[0].sql, let separatorSQL = args[1].sql, let indexSQL = args[2].sql
            {
                sql = .function(.splitPart, [textSQL, separatorSQL, indexSQL])
            }
            return CompiledExpression(
                type: ExpressionType(.string, optional: true),
                run: { c throws(FerryError) in
                    let value = try text(c)
                    let sep = try separator(c)
                    let position = try index(c)
                    guard let s = ExpressionRuntime.text(value), let p = ExpressionRuntime.text(sep),
                        case .integer(let i) = position
                    else { return .null }
                    guard !p.isEmpty else { throw site.fail("the separator is empty", c) }
                    return ExpressionRuntime.splitPart(s, separator: p, index: i)
                }, sql: sql)

        case "before", "after", "before_last", "after_last":
            try arity(name, nodes, node, 2...2, "text, separator")
            try requireText(args[0], nodes[0], name, 0)
            try requireText(args[1], nodes[1], name, 1)
            let text = args[0].run
            let separator = args[1].run
            let last = name.hasSuffix("_last")
            let before = name.hasPrefix("before")
            return CompiledExpression(
                type: ExpressionType(.string, optional: true),
                run: { c throws(FerryError) in
                    guard let s = ExpressionRuntime.text(try text(c)), let p = ExpressionRuntime.text(try separator(c)),
                        !p.isEmpty
                    else { return .null }
                    guard let range = last ? s.ranges(of: p).last : s.firstRange(of: p) else { return .null }
                    return .string(String(before ? s[..<range.lowerBound] : s[range.upperBound...]))
                })

        case "substring":
            try arity(name, nodes, node, 2...3, "text, start[, length]")
            try requireText(args[0], nodes[0], name, 0)
            try requireInteger(args[1], nodes[1], name, 1)
            if args.count == 3 { try requireInteger(args[2], nodes[2], name, 2) }
            let text = args[0].run
            let start = args[1].run
            let length: ExpressionProgram? = args.count == 3 ? args[2].run : nil
            return CompiledExpression(
                type: ExpressionType(.string, optional: args.contains { $0.type.isOptional }),
                run: { c throws(FerryError) in
                    guard let s = ExpressionRuntime.text(try text(c)), case .integer(let from) = try start(c) else {
                        return .null
                    }
                    var count = Int64.max
                    if let length {
                        guard case .integer(let n) = try length(c) else { return .null }
                        guard n >= 0 else { throw site.fail("the length \(n) is negative", c) }
                        count = n
                    }
                    let total = Int64(s.count)
                    var lower = from < 0 ? max(total + from, 0) : min(from, total)
                    lower = max(lower, 0)
                    let upper = count >= total - lower ? total : lower + count
                    let startIndex = s.index(s.startIndex, offsetBy: Int(lower))
                    let endIndex = s.index(startIndex, offsetBy: Int(upper - lower))
                    return .string(String(s[startIndex..<endIndex]))
                })

        case "replace":
            try arity(name, nodes, node, 3...3, "text, find, replacement")
            for i in 0..<3 { try requireText(args[i], nodes[i], name, i) }
            let text = args[0].run
            let find = args[1].run
            let with = args[2].run
            return CompiledExpression(
                type: ExpressionType(.string, optional: args[0].type.isOptional),
                run: { c throws(FerryError) in
                    let value = try text(c)
                    guard let s = ExpressionRuntime.text(value) else { return .null }
                    guard let f = ExpressionRuntime.text(try find(c)), !f.isEmpty else { return .string(s) }
                    let w = ExpressionRuntime.text(try with(c)) ?? ""
                    return .string(s.replacing(f, with: w))
                })

        case "regex_replace":
            try arity(name, nodes, node, 3...3, "text, pattern, replacement")
            try requireText(args[0], nodes[0], name, 0)
            let pattern = try literalText(args[1], nodes[1], name, 1, "a regular expression")
            try requireText(args[2], nodes[2], name, 2)
            let regex: CompiledRegex
            do {
                regex = CompiledRegex(try NSRegularExpression(pattern: pattern))
            } catch {
                throw self.error("invalid regular expression '\(pattern)'", at: nodes[1].mark)
            }
            let text = args[0].run
            let template = args[2].run
            return CompiledExpression(
                type: ExpressionType(.string, optional: args[0].type.isOptional),
                run: { c throws(FerryError) in
                    guard let s = ExpressionRuntime.text(try text(c)) else { return .null }
                    let t = ExpressionRuntime.text(try template(c)) ?? ""
                    let range = NSRange(s.startIndex..<s.endIndex, in: s)
                    return .string(
                        regex.regex.stringByReplacingMatches(in: s, options: [], range: range, withTemplate: t))
                })

        case "concat":
            try arity(name, nodes, node, 1...Int.max, "value, …")
            let runs = args.map(\.run)
            let allText = args.allSatisfy { $0.type.kind == .string && !$0.type.isOptional }
            let sql: SQLTemplate? =
                allText
                ? args.reduce(Optional<[SQLTemplate]>.some([])) { list, arg in
                    list.flatMap { l in arg.sql.map { l + [$0] } }
                }.map { .concatenate($0) } : nil
            return CompiledExpression(
                type: ExpressionType(.string),
                run: { c throws(FerryError) in
                    var out = ""
                    for run in runs { out += ExpressionRuntime.string(try run(c)) }
                    return .string(out)
                }, sql: sql)

        case "coalesce":
            try arity(name, nodes, node, 1...Int.max, "value, …")
            var type = try unify(args, nodes, what: "the arguments of coalesce()", at: node.mark)
            type.isOptional = args.allSatisfy { $0.type.isOptional }
            var runs: [ExpressionProgram] = []
            for (arg, argNode) in zip(args, nodes) { runs.append(try convert(arg, to: type, node: argNode)) }
            let frozen = runs
            let sameKind = args.allSatisfy { $0.type.kind == type.kind }
            let sql: SQLTemplate? =
                sameKind
                ? args.reduce(Optional<[SQLTemplate]>.some([])) { list, arg in
                    list.flatMap { l in arg.sql.map { l + [$0] } }
                }.map { .coalesce($0) } : nil
            return CompiledExpression(
                type: type,
                run: { c throws(FerryError) in
                    for run in frozen {
                        let value = try run(c)
                        if !value.isNull { return value }
                    }
                    return .null
                }, sql: sql)

        case "min", "max":
            try arity(name, nodes, node, 2...Int.max, "value, value, …")
            let type = try unify(args, nodes, what: "the arguments of \(name)()", at: node.mark)
            guard ![.bool, .binary, .json].contains(type.kind) else {
                throw error("\(name)() cannot order \(type.kind.rawValue) values", at: node.mark)
            }
            var runs: [ExpressionProgram] = []
            for (arg, argNode) in zip(args, nodes) { runs.append(try convert(arg, to: type, node: argNode)) }
            let frozen = runs
            let wantLess = name == "min"
            return CompiledExpression(
                type: ExpressionType(type.kind, optional: args.allSatisfy { $0.type.isOptional }),
                run: { c throws(FerryError) in
                    var best = Value.null
                    for run in frozen {
                        let value = try run(c)
                        if value.isNull { continue }
                        if best.isNull {
                            best = value
                            continue
                        }
                        guard let order = ExpressionRuntime.compare(value, best) else {
                            throw site.fail("cannot compare \(value.typeName) with \(best.typeName)", c)
                        }
                        if wantLess ? order < 0 : order > 0 { best = value }
                    }
                    return best
                })

        case "abs":
            try arity(name, nodes, node, 1...1, "number")
            try require(args[0], nodes[0], Self.numberKinds, name, 0, "a number")
            let run = args[0].run
            return CompiledExpression(
                type: args[0].type,
                run: { c throws(FerryError) in
                    switch try run(c) {
                    case .integer(let v):
                        guard v != Int64.min else { throw site.fail("integer overflow", c) }
                        return .integer(abs(v))
                    case .decimal(let text): return .decimal(DecimalArithmetic.absolute(text))
                    case .double(let v): return .double(abs(v))
                    case let other: return try ExpressionRuntime.nullOrFail(other, "a number", site, c)
                    }
                })

        case "round":
            try arity(name, nodes, node, 1...2, "number[, places]")
            try require(args[0], nodes[0], Self.numberKinds, name, 0, "a number")
            if args.count == 2 { try requireInteger(args[1], nodes[1], name, 1) }
            let run = args[0].run
            let zero: ExpressionProgram = { _ throws(FerryError) in .integer(0) }
            let places = args.count == 2 ? args[1].run : zero
            return CompiledExpression(
                type: args[0].type,
                run: { c throws(FerryError) in
                    let value = try run(c)
                    guard case .integer(let n) = try places(c) else { return .null }
                    guard n >= 0, n <= 1000 else { throw site.fail("round() needs 0 to 1000 places, not \(n)", c) }
                    switch value {
                    case .integer: return value
                    case .decimal(let text): return .decimal(DecimalArithmetic.round(text, places: Int(n)))
                    case .double(let v):
                        guard n <= 300 else { return value }
                        let scale = pow(10.0, Double(n))
                        let rounded = (v * scale).rounded(.toNearestOrAwayFromZero) / scale
                        return .double(rounded.isFinite ? rounded : v)
                    default: return try ExpressionRuntime.nullOrFail(value, "a number", site, c)
                    }
                })

        case "int", "decimal", "double", "string", "bool":
            try arity(name, nodes, node, 1...1, "value")
            let forbidden: Set<ExpressionType.Kind> = name == "string" ? [] : [.binary, .json, .uri, .uuid]
            if forbidden.contains(args[0].type.kind) {
                throw error("\(name)() cannot convert \(describe(nodes[0], args[0]))", at: node.mark)
            }
            switch name {
            case "int": return conversion(args[0], site, .integer, ExpressionRuntime.toInteger)
            case "decimal": return conversion(args[0], site, .decimal, ExpressionRuntime.toDecimal)
            case "double": return conversion(args[0], site, .double, ExpressionRuntime.toDouble)
            case "bool": return conversion(args[0], site, .bool, ExpressionRuntime.toBool)
            default:
                return conversion(args[0], site, .string) { value in
                    .success(value.isNull ? .null : .string(ExpressionRuntime.string(value)))
                }
            }

        case "date":
            try arity(name, nodes, node, 1...2, "value[, format]")
            try require(
                args[0], nodes[0], [.string, .integer, .decimal, .date], name, 0, "a string, a number or a date")
            var format: DateFormat?
            if args.count == 2 {
                let text = try literalText(args[1], nodes[1], name, 1, "a date format")
                switch DateFormat.parse(text) {
                case .success(let parsed): format = parsed
                case .failure(let failure): throw error(failure.message, at: nodes[1].mark)
                }
            }
            let chosen = format
            return conversion(args[0], site, .date) { ExpressionRuntime.toDate($0, format: chosen) }

        case "format_date":
            try arity(name, nodes, node, 2...2, "date, format")
            try require(args[0], nodes[0], [.date], name, 0, "a date", hint: "; parse it with date(…)")
            let text = try literalText(args[1], nodes[1], name, 1, "a date format")
            let formatter: DateFormatting
            switch DateFormatting.compile(text) {
            case .success(let compiled): formatter = compiled
            case .failure(let failure): throw error(failure.message, at: nodes[1].mark)
            }
            let run = args[0].run
            return CompiledExpression(
                type: ExpressionType(.string, optional: args[0].type.isOptional),
                run: { c throws(FerryError) in
                    let value = try run(c)
                    guard case .date(let instant) = value else {
                        return try ExpressionRuntime.nullOrFail(value, "a date", site, c)
                    }
                    return .string(formatter.format(instant.milliseconds))
                })

        case "uuid":
            try arity(name, nodes, node, 0...1, "[text]")
            if args.isEmpty {
                return CompiledExpression(
                    type: ExpressionType(.uuid), run: { _ throws(FerryError) in ExpressionRuntime.randomUUID() })
            }
            try require(args[0], nodes[0], [.string, .uuid], name, 0, "a string")
            return conversion(args[0], site, .uuid, ExpressionRuntime.toUUID)

        case "now":
            try arity(name, nodes, node, 0...0, "")
            return .constant(.date(now))

        default:
            throw error("unknown function '\(name)'", at: node.mark)
        }
    }
}

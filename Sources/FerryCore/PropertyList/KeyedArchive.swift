/// An `NSKeyedArchiver` archive read without Foundation's unarchiver (which needs the archived
/// classes and mishandles references on Linux): the object graph of a Core Data cached model,
/// compiled model or mapping-model value expression, navigated by class names and keys.
///
/// ```swift
/// let archive = try KeyedArchive(bytes, source: "Z_MODELCACHE of 'App.sqlite'")
/// let model = try archive.root()                       // an NSManagedObjectModel
/// for (name, entity) in try archive.dictionary(model["NSEntities"]) { … }
/// ```
///
/// Layout (COREDATA.md, Appendix A): a binary plist whose top dictionary holds `$archiver`,
/// `$top` (`root` → a UID) and `$objects`; `$objects[0]` is `$null`; an object is a dictionary
/// with `$class` → a class dictionary (`$classname`, `$classes`); collections keep their members
/// in `NS.objects` (and `NS.keys`).
package struct KeyedArchive: Sendable {
    /// One archived object: its class and its encoded fields (references still unresolved).
    package struct Object: Sendable, Hashable {
        /// The object's index in `$objects`.
        package let index: Int
        /// `$classname`, e.g. `NSEntityDescription`.
        package let className: String
        /// The class chain, most derived first (`$classes`).
        package let classChain: [String]
        package let fields: PropertyListDictionary

        package subscript(key: String) -> PropertyListValue? { fields[key] }

        /// True when the object's class is `name` or derives from it.
        package func isKind(of name: String) -> Bool { className == name || classChain.contains(name) }
    }

    private let objects: [PropertyListValue]
    private let rootReference: PropertyListValue
    package let source: String

    /// Reads a keyed archive from binary-plist bytes; `source` names it in errors.
    package init(_ bytes: [UInt8], source: String) throws {
        let top = try BinaryPropertyList.decode(bytes, source: source)
        guard let objects = top["$objects"]?.array,
            let root = top["$top"]?["root"] ?? top["$top"]?.dictionary?.entries.first?.value
        else {
            throw FerryError(.invalidInput, "\(source) is not a keyed archive (it has no $objects or $top)")
        }
        self.objects = objects
        self.rootReference = root
        self.source = source
    }

    /// The root object.
    package func root() throws -> Object {
        guard let object = try object(rootReference) else {
            throw FerryError(.invalidInput, "\(source): the archive's root object is nil")
        }
        return object
    }

    /// Follows a reference: the value it points at (`nil` for `$null` or an absent value); any
    /// other value is returned as it is (archives store small numbers and booleans inline).
    package func resolve(_ value: PropertyListValue?) throws -> PropertyListValue? {
        guard let value else { return nil }
        guard case .uid(let uid) = value else { return value }
        guard uid < UInt64(objects.count) else {
            throw FerryError(.invalidInput, "\(source): a reference to object \(uid) of \(objects.count)")
        }
        let target = objects[Int(uid)]
        if case .string("$null") = target { return nil }
        if case .uid = target {
            throw FerryError(.invalidInput, "\(source): object \(uid) is a reference to a reference")
        }
        return target
    }

    /// The object a reference points at, or nil for `$null`; an error when it is not an object.
    package func object(_ value: PropertyListValue?) throws -> Object? {
        guard let value else { return nil }
        guard let resolved = try resolve(value) else { return nil }
        guard let fields = resolved.dictionary, let classReference = fields["$class"] else {
            throw FerryError(.invalidInput, "\(source): expected an archived object, found \(Self.describe(resolved))")
        }
        guard let classInfo = try resolve(classReference), let className = classInfo["$classname"]?.string else {
            throw FerryError(.invalidInput, "\(source): an archived object whose $class has no $classname")
        }
        let chain = classInfo["$classes"]?.array?.compactMap(\.string) ?? [className]
        let index = value.uid.map { Int($0) } ?? -1
        return Object(index: index, className: className, classChain: chain, fields: fields)
    }

    /// A string: a plain plist string, or an `NSString`/`NSMutableString` object (`NS.string`,
    /// or `NS.bytes` as UTF-8); nil for `$null`.
    package func string(_ value: PropertyListValue?) throws -> String? {
        guard let resolved = try resolve(value) else { return nil }
        if let text = resolved.string { return text }
        guard let object = try object(value) else { return nil }
        if let text = try resolve(object["NS.string"])?.string { return text }
        if let bytes = try resolve(object["NS.bytes"])?.data { return String(decoding: bytes, as: UTF8.self) }
        throw FerryError(.invalidInput, "\(source): expected a string, found a \(object.className)")
    }

    /// The members of an `NSArray`, `NSSet`, `NSOrderedSet` (or a plain plist array), each still a
    /// reference (resolve with ``object(_:)``, ``string(_:)``…); empty for `$null`.
    package func array(_ value: PropertyListValue?) throws -> [PropertyListValue] {
        guard let resolved = try resolve(value) else { return [] }
        if let items = resolved.array { return items }
        guard let object = try object(value) else { return [] }
        guard let items = try resolve(object["NS.objects"])?.array else {
            if object.isKind(of: "NSArray") || object.isKind(of: "NSSet") || object.isKind(of: "NSOrderedSet") {
                return []
            }
            throw FerryError(.invalidInput, "\(source): expected a collection, found a \(object.className)")
        }
        return items
    }

    /// The entries of an `NSDictionary` (`NS.keys` + `NS.objects`), of Core Data's
    /// `NSKnownKeysDictionary1` (`searchMapping.keys` + `values`), or a plain plist dictionary, in
    /// archive order; values are still references. Empty for `$null`.
    package func dictionary(_ value: PropertyListValue?) throws -> [(key: String, value: PropertyListValue)] {
        guard let resolved = try resolve(value) else { return [] }
        if let plain = resolved.dictionary, plain["$class"] == nil { return plain.entries }
        guard let object = try object(value) else { return [] }
        let keys: [PropertyListValue]
        let values: [PropertyListValue]
        if object["NS.keys"] != nil || object["NS.objects"] != nil {
            keys = try array(object["NS.keys"])
            values = try array(object["NS.objects"])
        } else if object["searchMapping"] != nil || object["values"] != nil {
            let mapping = try self.object(object["searchMapping"])
            keys = try array(mapping?["keys"])
            values = try array(object["values"])
        } else if object.isKind(of: "NSDictionary") {
            return []
        } else {
            throw FerryError(.invalidInput, "\(source): expected a dictionary, found a \(object.className)")
        }
        guard keys.count == values.count else {
            throw FerryError(
                .invalidInput, "\(source): a \(object.className) with \(keys.count) keys and \(values.count) values")
        }
        var entries: [(key: String, value: PropertyListValue)] = []
        entries.reserveCapacity(keys.count)
        for (key, value) in zip(keys, values) {
            guard let name = try string(key) else {
                throw FerryError(.invalidInput, "\(source): a \(object.className) key that is nil")
            }
            entries.append((name, value))
        }
        return entries
    }

    /// A number or boolean stored inline or as an `NSNumber` object.
    package func integer(_ value: PropertyListValue?) throws -> Int64? {
        try resolve(value)?.integer
    }

    /// A boolean stored inline (`NSIsOptional`, …); nil when absent.
    package func bool(_ value: PropertyListValue?) throws -> Bool? {
        try resolve(value)?.bool
    }

    private static func describe(_ value: PropertyListValue) -> String {
        switch value {
        case .string: return "a string"
        case .integer, .unsignedInteger: return "an integer"
        case .real: return "a real number"
        case .bool: return "a boolean"
        case .date: return "a date"
        case .data: return "data"
        case .array: return "an array"
        case .dictionary: return "a dictionary without $class"
        case .uid: return "a reference"
        case .null: return "null"
        }
    }
}

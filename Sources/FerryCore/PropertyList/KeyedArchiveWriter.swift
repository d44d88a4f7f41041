/// A writer of `NSKeyedArchiver` archives, the inverse of ``KeyedArchive``: how ferry writes
/// the model a Core Data store caches (`Z_MODELCACHE`, COREDATA.md Appendix A).
///
/// ```swift
/// var writer = KeyedArchiveWriter()
/// let root = writer.reserve()
/// writer.define(root, className: "NSManagedObjectModel", fields: [("NSEntities", entities)])
/// let bytes = writer.encode(root: root)
/// ```
///
/// Layout: a binary plist whose top dictionary holds `$version` 100000, `$archiver`
/// `NSKeyedArchiver`, `$top` (`root` → a UID) and `$objects`, whose first member is the string
/// `$null` (the UID 0 is nil). An object is a dictionary with `$class` → a class dictionary
/// (`$classname`, `$classes`: the class chain, most derived first), written once per class;
/// strings are plain plist strings, written once per value; numbers and booleans sit inline in
/// their object, as Apple's archiver writes them.
package struct KeyedArchiveWriter {
    private var objects: [PropertyListValue] = [.string("$null")]
    private var classes: [String: UInt64] = [:]
    private var strings: [String: UInt64] = [:]

    /// Class chains of the classes Core Data's cached models use (observed in real caches):
    /// `$classes` of a class not listed is the class, then `NSObject`.
    static let classChains: [String: [String]] = [
        "NSKnownKeysDictionary1": ["NSKnownKeysDictionary", "NSMutableDictionary", "NSDictionary"],
        "NSKnownKeysMappingStrategy1": ["NSKnownKeysMappingStrategy"],
        "NSMutableDictionary": ["NSDictionary"],
        "NSMutableArray": ["NSArray"],
        "NSMutableSet": ["NSSet"],
        "NSAttributeDescription": ["NSPropertyDescription"],
        "NSRelationshipDescription": ["NSPropertyDescription"],
        "NSFetchedPropertyDescription": ["NSPropertyDescription"],
        "NSDecimalNumberPlaceholder": ["NSDecimalNumber", "NSNumber", "NSValue"],
    ]

    /// An empty archive (holding only `$null`).
    package init() {}

    /// The reference standing for nil.
    package static let null = PropertyListValue.uid(0)

    /// A place for an object defined later with ``define(_:className:fields:)`` (objects that
    /// refer to each other, such as an entity and its properties).
    package mutating func reserve() -> PropertyListValue {
        objects.append(.null)
        return .uid(UInt64(objects.count - 1))
    }

    /// Fills a reserved place with an object of `className` and its encoded fields (values
    /// inline, or references from this writer).
    package mutating func define(
        _ reference: PropertyListValue, className: String, fields: [(String, PropertyListValue)]
    ) {
        guard case .uid(let index) = reference, index > 0, Int(index) < objects.count else {
            preconditionFailure("define(_:) takes a reference from reserve()")
        }
        let classReference = classUID(className)
        objects[Int(index)] = .dictionary(PropertyListDictionary(fields + [("$class", classReference)]))
    }

    /// A new object of `className`.
    package mutating func object(className: String, fields: [(String, PropertyListValue)]) -> PropertyListValue {
        let reference = reserve()
        define(reference, className: className, fields: fields)
        return reference
    }

    /// A reference to a string; nil gives the nil reference.
    package mutating func string(_ text: String?) -> PropertyListValue {
        guard let text else { return Self.null }
        if let index = strings[text] { return .uid(index) }
        objects.append(.string(text))
        let index = UInt64(objects.count - 1)
        strings[text] = index
        return .uid(index)
    }

    /// A reference to a plain value stored as its own object (a default value that is a number,
    /// data…).
    package mutating func value(_ value: PropertyListValue) -> PropertyListValue {
        if case .string(let text) = value { return string(text) }
        objects.append(value)
        return .uid(UInt64(objects.count - 1))
    }

    /// An `NSArray` (or `className`, an array or set class) of references.
    package mutating func array(_ items: [PropertyListValue], className: String = "NSArray") -> PropertyListValue {
        object(className: className, fields: [("NS.objects", .array(items))])
    }

    /// An `NSDictionary` (or `className`) with string keys, in the order given.
    package mutating func dictionary(
        _ entries: [(key: String, value: PropertyListValue)], className: String = "NSDictionary"
    ) -> PropertyListValue {
        let keys = entries.map { string($0.key) }
        return object(
            className: className, fields: [("NS.keys", .array(keys)), ("NS.objects", .array(entries.map(\.value)))])
    }

    /// The archive's bytes, with `root` as its root object.
    package func encode(root: PropertyListValue) -> [UInt8] {
        var top = PropertyListDictionary()
        top["$version"] = .integer(100_000)
        top["$archiver"] = .string("NSKeyedArchiver")
        top["$top"] = .dictionary(PropertyListDictionary([("root", root)]))
        top["$objects"] = .array(objects)
        return BinaryPropertyListWriter.encode(.dictionary(top))
    }

    private mutating func classUID(_ name: String) -> PropertyListValue {
        if let index = classes[name] { return .uid(index) }
        let chain = [name] + (Self.classChains[name] ?? []) + ["NSObject"]
        objects.append(
            .dictionary(
                PropertyListDictionary([
                    ("$classname", .string(name)), ("$classes", .array(chain.map(PropertyListValue.string))),
                ])))
        let index = UInt64(objects.count - 1)
        classes[name] = index
        return .uid(index)
    }
}

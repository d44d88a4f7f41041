import FerryCore

/// Rewrites Customer phone numbers to E.164 form (`+` and digits only) while the store migrates:
/// "+64 22 792 8244", "(022) 792-8244" and "022 792 8244" all become "+64227928244".
///
/// A number with a leading `+` keeps its country code; `00` is the international prefix; any
/// other number is national: its trunk `0` is dropped and the default country code put in front.
/// A number with fewer than 6 digits cannot be a phone number: the migration fails, naming the
/// customer, and the original store stays as it was.
final class PhoneNormalizer: EntityMigrationPolicy {
    let defaultCountryCode: String
    /// Where `phone` is in the mapping's destination rows (nil when the entity has none),
    /// looked up once per entity mapping.
    private var phone: Int?

    init(defaultCountryCode: String = "64") {
        self.defaultCountryCode = defaultCountryCode
    }

    func begin(mapping: MappingContext, manager: MigrationManager) throws {
        phone = mapping.destinationColumns.position(of: "phone")
    }

    func createDestinationInstances(
        forSource source: MigrationObject, mapping: MappingContext, manager: MigrationManager
    ) throws {
        // Everything else as the mapping file says (names split, the rest carried over), by position.
        var row = try manager.mappedRow(forSource: source, mapping: mapping)
        if let phone, let number = row.string(at: phone) {
            guard let normalized = normalize(number) else {
                let id = source["id"]
                throw FerryError(
                    .migration,
                    "\(mapping.name) \(id): cannot normalise the phone number '\(number)' (fewer than 6 digits)")
            }
            row[phone] = .string(normalized)
        }
        try manager.insertDestinationRow(row, forSource: source, mapping: mapping)
    }

    /// The E.164 form of a phone number, or nil when it has fewer than 6 digits.
    func normalize(_ phone: String) -> String? {
        let text = phone.drop { $0 == " " }
        var digits = String(text.filter(\.isASCIIDigit))
        guard digits.count >= 6 else { return nil }
        if text.hasPrefix("+") { return "+" + digits }
        if digits.hasPrefix("00") { return "+" + digits.dropFirst(2) }
        if digits.hasPrefix("0") { digits.removeFirst() }
        return "+" + defaultCountryCode + digits
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}

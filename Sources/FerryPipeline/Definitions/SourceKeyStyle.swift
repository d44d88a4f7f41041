import FerryCore

/// How an import names the source field of an attribute that `fields:` does not map
/// (`key_style:` on an import step, `--key-style` on the command line).
public enum SourceKeyStyle: String, Sendable, Hashable, CaseIterable {
    /// The field is named like the attribute.
    case asIs = "as_is"
    /// The conventions of JSON APIs synced into Core Data models (3lvis/Sync): the attribute's
    /// user info `sync.remoteKey` (or the older `hyper.remoteKey`), else `id` for an attribute
    /// named `remoteID`, else the snake_case of its name (`firstName` → `first_name`,
    /// `profileURL` → `profile_url`).
    case snakeCase = "snake_case"

    /// The source field an attribute reads when `fields:` does not name one.
    public func fieldName(for attribute: AttributeDescription) -> String {
        guard self == .snakeCase else { return attribute.name }
        if let remote = attribute.userInfo["sync.remoteKey"] ?? attribute.userInfo["hyper.remoteKey"], !remote.isEmpty {
            return remote
        }
        if attribute.name == "remoteID" { return "id" }
        return Self.snakeCased(attribute.name)
    }

    /// The source field of a relationship's nested object(s) or key(s): with `snake_case`, the
    /// relationship's user info `sync.remoteKey` (or `hyper.remoteKey`), else the snake_case of
    /// its name (`superNotes` → `super_notes`); else its name.
    public func fieldName(for relationship: RelationshipDescription) -> String {
        guard self == .snakeCase else { return relationship.name }
        if let remote = relationship.userInfo["sync.remoteKey"] ?? relationship.userInfo["hyper.remoteKey"],
            !remote.isEmpty
        {
            return remote
        }
        return Self.snakeCased(relationship.name)
    }

    /// `firstName` → `first_name`, `remoteID` → `remote_id`, `URLString` → `url_string`,
    /// `address2Line` → `address2_line`; a name already in snake_case stays as it is.
    public static func snakeCased(_ name: String) -> String {
        let characters = Array(name)
        var result = ""
        for (index, character) in characters.enumerated() {
            if character.isUppercase, index > 0 {
                let previous = characters[index - 1]
                let nextIsLower = index + 1 < characters.count && characters[index + 1].isLowercase
                if previous.isLowercase || previous.isNumber || (previous.isUppercase && nextIsLower) {
                    result.append("_")
                }
            }
            result += character.lowercased()
        }
        return result
    }

    /// True when an attribute's user info marks it as the primary key (`sync.isPrimaryKey` or
    /// `hyper.isPrimaryKey` set to YES or true), as Sync's models do.
    static func isPrimaryKey(_ attribute: AttributeDescription) -> Bool {
        guard let flag = attribute.userInfo["sync.isPrimaryKey"] ?? attribute.userInfo["hyper.isPrimaryKey"] else {
            return false
        }
        return ["yes", "true", "1"].contains(flag.lowercased())
    }
}

/// Xcode mapping models (`xcmapping.xml`) written as Xcode writes them, for tests of ferry's
/// reading of them: the XML-store form, property mappings with or without Xcode's
/// `sourcekeypath` and `sourcemappingname` fields.
public enum XcodeMappingDocument {
    /// A relationship mapping: (name, sourcekeypath, sourcemappingname), or just a name.
    public typealias Relationship = (name: String, keyPath: String?, mapping: String?)
    /// An entity mapping: its source and destination entities and the properties it lists.
    public typealias Entity = (source: String, destination: String, attributes: [String], relationships: [Relationship])

    /// An `xcmapping.xml` in Xcode's XML-store form mapping model version `source` to
    /// `destination` (project-relative paths of the `.xcdatamodel` folders), with one entity
    /// mapping per entry, numbered in order; a property mapping without a key path has no
    /// expression (Xcode's implicit one).
    public static func xml(source: String, destination: String, entities: [Entity]) -> String {
        var objects: [String] = []
        var next = 200
        var entityIDs: [String] = []
        for (number, entity) in entities.enumerated() {
            let id = "z\(next)"
            next += 1
            entityIDs.append(id)
            var attributeIDs: [String] = []
            for attribute in entity.attributes {
                let attributeID = "z\(next)"
                next += 1
                attributeIDs.append(attributeID)
                objects.append(
                    """
                        <object type="XDDEVATTRIBUTEMAPPING" id="\(attributeID)">
                            <attribute name="name" type="string">\(attribute)</attribute>
                            <relationship name="entitymapping" type="1/1" destination="XDDEVENTITYMAPPING" idrefs="\(id)"></relationship>
                        </object>
                    """)
            }
            var relationshipIDs: [String] = []
            for relationship in entity.relationships {
                let relationshipID = "z\(next)"
                next += 1
                relationshipIDs.append(relationshipID)
                var fields = "        <attribute name=\"autogenerateexpression\" type=\"bool\">1</attribute>\n"
                if let keyPath = relationship.keyPath {
                    fields += "        <attribute name=\"sourcekeypath\" type=\"string\">\(keyPath)</attribute>\n"
                }
                if let mapping = relationship.mapping {
                    fields += "        <attribute name=\"sourcemappingname\" type=\"string\">\(mapping)</attribute>\n"
                }
                objects.append(
                    """
                        <object type="XDDEVRELATIONSHIPMAPPING" id="\(relationshipID)">
                    \(fields)        <attribute name="name" type="string">\(relationship.name)</attribute>
                            <relationship name="entitymapping" type="1/1" destination="XDDEVENTITYMAPPING" idrefs="\(id)"></relationship>
                        </object>
                    """)
            }
            objects.append(
                """
                    <object type="XDDEVENTITYMAPPING" id="\(id)">
                        <attribute name="sourcename" type="string">\(entity.source)</attribute>
                        <attribute name="mappingtypename" type="string">Undefined</attribute>
                        <attribute name="mappingnumber" type="int16">\(number + 1)</attribute>
                        <attribute name="migrationpolicyclassname" type="string"></attribute>
                        <attribute name="destinationname" type="string">\(entity.destination)</attribute>
                        <attribute name="autogenerateexpression" type="bool">1</attribute>
                        <relationship name="mappingmodel" type="1/1" destination="XDDEVMAPPINGMODEL" idrefs="z100"></relationship>
                        <relationship name="attributemappings" type="0/0" destination="XDDEVATTRIBUTEMAPPING" idrefs="\(attributeIDs.joined(separator: " "))"></relationship>
                        <relationship name="relationshipmappings" type="0/0" destination="XDDEVRELATIONSHIPMAPPING" idrefs="\(relationshipIDs.joined(separator: " "))"></relationship>
                    </object>
                """)
        }
        return """
            <?xml version="1.0" standalone="yes"?>
            <!DOCTYPE database SYSTEM "file:///System/Library/DTDs/CoreData.dtd">
            <database>
                <databaseInfo><version>134481920</version><nextObjectID>\(next)</nextObjectID></databaseInfo>
                <object type="XDDEVMAPPINGMODEL" id="z100">
                    <attribute name="sourcemodelpath" type="string">\(source)</attribute>
                    <attribute name="destinationmodelpath" type="string">\(destination)</attribute>
                    <relationship name="entitymappings" type="0/0" destination="XDDEVENTITYMAPPING" idrefs="\(entityIDs.joined(separator: " "))"></relationship>
                </object>
            \(objects.joined(separator: "\n"))
            </database>
            """
    }
}

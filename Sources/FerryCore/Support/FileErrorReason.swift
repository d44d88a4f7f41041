import Foundation

/// The cause of a failed Foundation file operation in plain words (`No such file or directory`,
/// `Permission denied`), never `The operation could not be completed (NSCocoaErrorDomain
/// error 256)`.
package enum FileErrorReason {
    /// The POSIX cause of `error` when Foundation kept one, else the best words it has.
    package static func describe(_ error: any Error) -> String {
        let nsError = error as NSError
        if nsError.domain == NSPOSIXErrorDomain { return FileIO.reason(Int32(nsError.code)) }
        if let underlying = nsError.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain
        {
            return FileIO.reason(Int32(underlying.code))
        }
        if nsError.domain == NSCocoaErrorDomain {
            switch nsError.code {
            case NSFileReadNoSuchFileError, NSFileNoSuchFileError: return "No such file or directory"
            case NSFileReadNoPermissionError, NSFileWriteNoPermissionError: return "Permission denied"
            case NSFileWriteOutOfSpaceError: return "No space left on device"
            case NSFileWriteFileExistsError: return "File exists"
            case NSFileWriteVolumeReadOnlyError: return "Read-only file system"
            default: break
            }
        }
        let text = nsError.localizedDescription
        if text.contains("NSCocoaErrorDomain") || text.hasPrefix("The operation could not be completed") {
            return "the operation failed"
        }
        return text
    }
}

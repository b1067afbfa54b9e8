import CGtkWebKit

/// The C library's heap.
enum Heap {
    /// Gives the heap's free pages back to the system: glibc keeps what was freed mapped (and
    /// counted in the process's resident anonymous memory) until it is asked, or until the top
    /// of the heap is free — which a long-lived program's heap seldom is.
    static func returnFreePages() {
        _ = malloc_trim(0)
    }
}

import Synchronization

/// Step-through, for whoever presents the flow: while it is on, each step (a request to the
/// identity service or an API, a navigation of the sign-in view) waits before it happens until the
/// presenter says Next; Continue turns it off and lets every waiting step go.
///
/// A wait is bounded: a step goes ahead by itself after ``longestHold``. The first thing in the
/// flow that expires while it waits is the authorization code, which Entra ID honours for about
/// 10 minutes after the redirect (the token request must come before); 8 minutes leaves the code
/// time for the steps after it. Nothing else waited for here has a shorter limit: the sign-in view
/// has no time limit of its own, and a request is held before it leaves, so no connection waits.
public final class StepThrough: Sendable {
    /// Why a waiting step went ahead.
    public enum Release: String, Sendable {
        /// The presenter pressed Next.
        case next
        /// The presenter pressed Continue (or turned step-through off).
        case `continue`
        /// It waited ``StepThrough/longestHold``.
        case limit
        /// Whatever waited for the step gave up (the sign-in was cancelled, the window closed).
        case cancelled
    }

    private struct Waiting {
        let id: Int
        let resume: CheckedContinuation<Release, Never>
        let timer: Task<Void, Never>
    }

    private struct State {
        var isOn = false
        var waiting: [Waiting] = []
        var lastID = 0
    }

    private let state = Mutex(State())
    /// The longest a step waits before it goes ahead by itself.
    public let longestHold: Duration

    public init(longestHold: Duration = .seconds(8 * 60)) {
        self.longestHold = longestHold
    }

    /// Whether steps wait for the presenter.
    public var isOn: Bool { state.withLock { $0.isOn } }

    /// How many steps wait now.
    public var waitingCount: Int { state.withLock { $0.waiting.count } }

    /// Turns step-through on: the next step waits.
    public func turnOn() { state.withLock { $0.isOn = true } }

    /// Next: the waiting step `number` (as ``wait(whenWaiting:)`` numbered it) goes ahead —
    /// the one the presenter saw, never one that began waiting since (a double press lets one
    /// step go).
    public func next(_ number: Int) { release(.next) { $0.extract { $0.id == number } } }

    /// Continue: step-through ends, and every waiting step goes ahead.
    public func continueTheRest() {
        // Off and every waiting step taken in one hold of the lock: a step that asks meanwhile
        // either is taken here or finds step-through off.
        let released = state.withLock { state in
            state.isOn = false
            defer { state.waiting.removeAll() }
            return state.waiting
        }
        resume(released, .continue)
    }

    /// Waits until the presenter lets the step go: at once (nil) when step-through is off.
    /// `waiting` runs first, with the step's number, once it is known that the step waits.
    public func wait(whenWaiting waiting: (Int) -> Void = { _ in }) async -> Release? {
        let id: Int? = state.withLock { state in
            guard state.isOn else { return nil }
            state.lastID += 1
            return state.lastID
        }
        guard let id else { return nil }
        waiting(id)
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let timer = Task { [longestHold] in
                    guard (try? await Task.sleep(for: longestHold)) != nil else { return }
                    self.release(.limit) { $0.extract { $0.id == id } }
                }
                // Cancelled, or step-through ended, since the number was given: no wait.
                let instead: Release? = state.withLock { state in
                    if Task.isCancelled { return .cancelled }
                    if !state.isOn { return .continue }
                    state.waiting.append(Waiting(id: id, resume: continuation, timer: timer))
                    return nil
                }
                if let instead {
                    timer.cancel()
                    continuation.resume(returning: instead)
                }
            }
        } onCancel: {
            release(.cancelled) { $0.extract { $0.id == id } }
        }
    }

    /// Resumes the steps `take` removes from the waiting ones (outside the lock).
    private func release(_ reason: Release, _ take: (inout [Waiting]) -> [Waiting]) {
        resume(state.withLock { state in take(&state.waiting) }, reason)
    }

    private func resume(_ released: [Waiting], _ reason: Release) {
        for step in released {
            step.timer.cancel()
            step.resume.resume(returning: reason)
        }
    }
}

extension Array {
    /// Removes the elements `predicate` picks, and returns them.
    fileprivate mutating func extract(where predicate: (Element) -> Bool) -> [Element] {
        let removed = filter(predicate)
        removeAll(where: predicate)
        return removed
    }
}

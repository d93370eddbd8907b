// How often the service may crash before the extension stops restarting it (vscode-go keeps the
// same kind of budget for gopls). Pure, so it is unit-tested.

export class CrashBudget {
	// crashes holds the times (ms) of the crashes still inside the window.
	private crashes: number[] = [];

	constructor(
		readonly max = 3,
		readonly windowMs = 3 * 60 * 1000,
	) {}

	/** Records a crash at `now`; returns true while restarts are still allowed (`max` within the window). */
	record(now: number): boolean {
		this.crashes = this.crashes.filter((t) => now - t < this.windowMs);
		this.crashes.push(now);
		return this.crashes.length <= this.max;
	}

	reset(): void {
		this.crashes = [];
	}

	get recent(): number {
		return this.crashes.length;
	}
}

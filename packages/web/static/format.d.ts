// Types of format.js, which stays plain JavaScript so a browser loads it without a build step.
export function formatBytes(value: unknown): string;
export function formatDuration(value: unknown): string;
export function toDate(value: unknown): Date | undefined;
export function formatIso(value: unknown): string;
export function formatTime(value: unknown, timeZone?: string, now?: Date): string;

// Types of bundle-banner.mjs, for the tests that import it.
export function bundleBanner(version: string): string;

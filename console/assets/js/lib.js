// The one place the vendored libraries are imported: Preact, its hooks, and htm, which turns
// tagged template literals into Preact elements (no build step, no JSX).
import { h, render, Fragment } from '../vendor/preact.mjs';
import { useState, useEffect, useRef, useCallback, useMemo, useId } from '../vendor/hooks.mjs';
import htm from '../vendor/htm.mjs';

export const html = htm.bind(h);
export { h, render, Fragment, useState, useEffect, useRef, useCallback, useMemo, useId };

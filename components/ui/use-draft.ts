"use client";

import { useState, type Dispatch, type SetStateAction } from "react";

// Local edits of a filter bar, started again from the URL whenever the URL's filters change
// (Back, a chip, a link): what a `key` on the component did, without remounting it, which threw
// keyboard focus to the page's body after every filter change (console review).
export function useDraft<T>(urlKey: string, fromUrl: () => T): [T, Dispatch<SetStateAction<T>>] {
  const [draft, setDraft] = useState(fromUrl);
  const [seen, setSeen] = useState(urlKey);
  if (urlKey !== seen) {
    setSeen(urlKey);
    setDraft(fromUrl());
  }
  return [draft, setDraft];
}

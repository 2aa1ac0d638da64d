import { describe, expect, it } from "vitest";
import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { BarChart } from "@/components/ui/bar-chart";

// The overview's charts: 1,440 one-minute buckets in a 600-unit box. Every bar with a value must be
// drawn inside the box and wide enough to see; the last minutes' bars were past its right edge.
type Bar = { x: number; width: number; height: number; title: string };

function bars(points: { label: string; value: number }[]): Bar[] {
  const html = renderToStaticMarkup(createElement(BarChart, { title: "Claims per minute", points }));
  return [...html.matchAll(/<rect x="([^"]+)" y="[^"]+" width="([^"]+)" height="([^"]+)"[^>]*><title>([^<]+)<\/title>/g)].map((m) => ({
    x: Number(m[1]),
    width: Number(m[2]),
    height: Number(m[3]),
    title: m[4]!,
  }));
}

const minutes = (values: Record<number, number>) => Array.from({ length: 1440 }, (_, i) => ({ label: `m${i}`, value: values[i] ?? 0 }));

describe("BarChart", () => {
  it("draws the last minute's bar inside the box, at least 2 units wide, at full height for the peak", () => {
    const drawn = bars(minutes({ 1439: 36, 1438: 12 }));
    expect(drawn).toHaveLength(1440);
    const last = drawn.at(-1)!;
    expect(last.title).toBe("m1439: 36");
    expect(last.width).toBeGreaterThanOrEqual(2);
    expect(last.x + last.width).toBeLessThanOrEqual(600);
    expect(last.height).toBe(116);
    for (const bar of drawn) expect(bar.x + bar.width, bar.title).toBeLessThanOrEqual(600);
    // The minute before it is still to its left.
    expect(drawn.at(-2)!.x).toBeLessThan(last.x);
  });

  it("keeps a gap between wide bars (24 hourly buckets)", () => {
    const drawn = bars(Array.from({ length: 24 }, (_, i) => ({ label: `h${i}`, value: i })));
    expect(drawn[0]).toMatchObject({ x: 0.5, width: 24 });
    expect(drawn.at(-1)!.x + drawn.at(-1)!.width).toBeLessThanOrEqual(600);
  });
});

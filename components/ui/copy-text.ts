// Copies text: the Clipboard API where the page is a secure context (https, localhost), else a
// hidden textarea's selection and execCommand (a console reached over plain http on a LAN name).
// False when the browser refused both.
export async function copyText(value: string): Promise<boolean> {
  try {
    if (navigator.clipboard && window.isSecureContext) {
      await navigator.clipboard.writeText(value);
      return true;
    }
  } catch {
    // Permission denied or no focus: try the selection below.
  }
  const area = document.createElement("textarea");
  area.value = value;
  area.setAttribute("readonly", "");
  area.style.position = "fixed";
  area.style.opacity = "0";
  document.body.appendChild(area);
  const before = document.activeElement instanceof HTMLElement ? document.activeElement : null;
  area.select();
  try {
    return document.execCommand("copy");
  } catch {
    return false;
  } finally {
    area.remove();
    before?.focus();
  }
}

/** The fenced code blocks of a Markdown document (test/docs-code.test.ts, test/getting-started.test.ts). */
export interface CodeBlock {
  file: string;
  line: number;
  info: string;
  code: string;
}

/** The fenced blocks of a Markdown text, indented ones (in list items) included, with their info strings. */
export function codeBlocks(file: string, text: string): CodeBlock[] {
  const blocks: CodeBlock[] = [];
  const lines = text.split('\n');
  for (let index = 0; index < lines.length; index++) {
    const open = /^( *)(```+)\s*([^\s`]*)/.exec(lines[index]!);
    if (!open) continue;
    const [, indent, fence, info] = open;
    const body: string[] = [];
    let end = index + 1;
    while (end < lines.length && !new RegExp(`^ *${fence}\\s*$`).test(lines[end]!)) {
      body.push(lines[end]!.startsWith(indent!) ? lines[end]!.slice(indent!.length) : lines[end]!.trimStart());
      end++;
    }
    blocks.push({ file, line: index + 1, info: info!.toLowerCase(), code: `${body.join('\n')}\n` });
    index = end;
  }
  return blocks;
}

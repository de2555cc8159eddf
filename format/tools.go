package format

import "github.com/compactkit/compact"

// The tool tables: one per agent, each row a convention of that agent (its
// tool's name, what the tool does, which argument names its target). A
// reader tags each call by its agent's table, then by genericTools; a tool
// neither knows is compact.ToolOther. tools_test.go has a test per table.

// Shorthands for the rows' target arguments.
var (
	argCommand = []string{"command", "cmd"}
	argPath    = []string{"file_path", "path", "absolute_path", "filePath", "notebook_path", "target_file", "filename", "file"}
	argDir     = []string{"path", "dir_path", "directory", "dir", "relative_workspace_path", "target_directory"}
	argQuery   = []string{"query", "pattern", "regex", "search_term", "search", "q", "keyword"}
	argURL     = []string{"url", "uri", "urls"}
	argPatch   = []string{"input", "patch"}
	argAgent   = []string{"description", "subagent_type", "agent", "task", "prompt"}
)

// editor is the row of a str_replace_editor-style tool: the sub-command in
// "command" says whether it reads or writes path.
var editor = toolRow{kind: compact.ToolWrite, target: argPath, sub: "command", subs: editorSubs}

// claudeCodeTools are Claude Code's built-in tools (its tool_use names).
var claudeCodeTools = toolTable{
	"Bash":                 {kind: compact.ToolShell, target: argCommand},                      // Bash {command, description}
	"BashOutput":           {kind: compact.ToolShell, target: []string{"bash_id", "shell_id"}}, // reads a background shell's output
	"KillShell":            {kind: compact.ToolShell, target: []string{"shell_id", "bash_id"}}, // stops a background shell
	"KillBash":             {kind: compact.ToolShell, target: []string{"shell_id", "bash_id"}}, // older name of KillShell
	"Read":                 {kind: compact.ToolRead, target: argPath},                          // Read {file_path, offset, limit}
	"NotebookRead":         {kind: compact.ToolRead, target: argPath},                          // Read for .ipynb (older versions)
	"Write":                {kind: compact.ToolWrite, target: argPath},                         // Write {file_path, content}
	"Edit":                 {kind: compact.ToolWrite, target: argPath},                         // Edit {file_path, old_string, new_string}
	"MultiEdit":            {kind: compact.ToolWrite, target: argPath},                         // MultiEdit {file_path, edits}
	"NotebookEdit":         {kind: compact.ToolWrite, target: argPath},                         // NotebookEdit {notebook_path, …}
	"Glob":                 {kind: compact.ToolSearch, target: []string{"pattern", "path"}},    // Glob {pattern}: file names
	"Grep":                 {kind: compact.ToolSearch, target: []string{"pattern", "path"}},    // Grep {pattern, path}: contents
	"LS":                   {kind: compact.ToolList, target: argDir},                           // LS {path}
	"WebFetch":             {kind: compact.ToolWeb, target: argURL},                            // WebFetch {url, prompt}
	"WebSearch":            {kind: compact.ToolWeb, target: argQuery},                          // WebSearch {query}
	"TodoWrite":            {kind: compact.ToolPlan},                                           // TodoWrite {todos}
	"TodoRead":             {kind: compact.ToolPlan},                                           // older todo reader
	"TaskCreate":           {kind: compact.ToolPlan, target: []string{"subject"}},              // 2.1 task list: TaskCreate {subject, description}
	"TaskUpdate":           {kind: compact.ToolPlan, target: []string{"taskId"}},               // TaskUpdate {taskId, status}
	"TaskList":             {kind: compact.ToolPlan},                                           // TaskList {}
	"TaskGet":              {kind: compact.ToolPlan, target: []string{"taskId"}},               // TaskGet {taskId}
	"TaskOutput":           {kind: compact.ToolOther, target: []string{"task_id", "taskId"}},   // a background task's output
	"TaskStop":             {kind: compact.ToolOther, target: []string{"task_id", "taskId"}},   // stops a background task
	"Task":                 {kind: compact.ToolAgent, target: argAgent},                        // Task {description, prompt, subagent_type}: a subagent
	"Agent":                {kind: compact.ToolAgent, target: argAgent},                        // newer name of Task
	"ExitPlanMode":         {kind: compact.ToolPlan, target: []string{"plan"}},                 // ExitPlanMode {plan}
	"EnterPlanMode":        {kind: compact.ToolPlan},                                           // EnterPlanMode {}
	"AskUserQuestion":      {kind: compact.ToolOther, target: []string{"question"}},            // AskUserQuestion {questions}
	"Skill":                {kind: compact.ToolOther, target: []string{"skill", "command"}},    // Skill {skill, args}
	"SlashCommand":         {kind: compact.ToolOther, target: argCommand},                      // SlashCommand {command}
	"ListMcpResourcesTool": {kind: compact.ToolOther, target: []string{"server"}},              // MCP resources
	"ReadMcpResourceTool":  {kind: compact.ToolRead, target: []string{"uri"}},                  // reads an MCP resource
	"mcp__*":               {kind: compact.ToolOther, target: targetKeys},                      // MCP tools: mcp__<server>__<tool>
}

// codexTools are Codex CLI's tools (function_call, custom_tool_call and
// local_shell_call names in rollouts).
var codexTools = toolTable{
	"shell":          {kind: compact.ToolShell, target: argCommand},                    // shell {command: argv, workdir}
	"container.exec": {kind: compact.ToolShell, target: argCommand},                    // the shell tool's first name
	"local_shell":    {kind: compact.ToolShell, target: argCommand},                    // local_shell_call {action: {command: argv}}
	"shell_command":  {kind: compact.ToolShell, target: argCommand},                    // shell_command {command: string}
	"exec_command":   {kind: compact.ToolShell, target: argCommand},                    // unified exec {cmd, workdir}
	"write_stdin":    {kind: compact.ToolShell, target: []string{"session_id"}},        // unified exec: input to a running command
	"exec":           {kind: compact.ToolShell, target: []string{"code", "input"}},     // code mode: runs a script of tool calls
	"apply_patch":    {kind: compact.ToolWrite, target: argPatch},                      // custom tool: the patch ("*** Update File: …")
	"update_plan":    {kind: compact.ToolPlan},                                         // update_plan {plan: [{step, status}]}
	"view_image":     {kind: compact.ToolRead, target: argPath},                        // view_image {path}
	"web_search":     {kind: compact.ToolWeb, target: argQuery},                        // web_search_call {action: {query}}
	"read_file":      {kind: compact.ToolRead, target: argPath},                        // experimental read_file {file_path}
	"list_dir":       {kind: compact.ToolList, target: argDir},                         // experimental list_dir {dir_path}
	"grep_files":     {kind: compact.ToolSearch, target: argQuery},                     // experimental grep_files {pattern}
	"spawn_agent":    {kind: compact.ToolAgent, target: []string{"message", "prompt"}}, // collab: starts a subagent
	"send_input":     {kind: compact.ToolAgent, target: []string{"message", "id"}},     // collab: talks to one
	"wait":           {kind: compact.ToolAgent, target: []string{"ids", "id"}},         // collab: waits for them
	"close_agent":    {kind: compact.ToolAgent, target: []string{"id"}},                // collab: stops one
}

// geminiTools are Gemini CLI's built-in tools (toolCalls[].name).
var geminiTools = toolTable{
	"run_shell_command":     {kind: compact.ToolShell, target: argCommand},                  // run_shell_command {command, description}
	"read_file":             {kind: compact.ToolRead, target: argPath},                      // read_file {absolute_path} (file_path in newer versions)
	"read_many_files":       {kind: compact.ToolRead, target: []string{"paths", "include"}}, // read_many_files {paths}
	"write_file":            {kind: compact.ToolWrite, target: argPath},                     // write_file {file_path, content}
	"replace":               {kind: compact.ToolWrite, target: argPath},                     // replace {file_path, old_string, new_string}
	"edit":                  {kind: compact.ToolWrite, target: argPath},                     // older name of replace
	"glob":                  {kind: compact.ToolSearch, target: argQuery},                   // glob {pattern}
	"search_file_content":   {kind: compact.ToolSearch, target: argQuery},                   // search_file_content {pattern}
	"grep":                  {kind: compact.ToolSearch, target: argQuery},                   // newer name of search_file_content
	"list_directory":        {kind: compact.ToolList, target: argDir},                       // list_directory {path} (dir_path in newer versions)
	"ls":                    {kind: compact.ToolList, target: argDir},                       // older name of list_directory
	"web_fetch":             {kind: compact.ToolWeb, target: []string{"url", "prompt"}},     // web_fetch {prompt} with the URLs in it
	"google_web_search":     {kind: compact.ToolWeb, target: argQuery},                      // google_web_search {query}
	"save_memory":           {kind: compact.ToolOther, target: []string{"fact"}},            // save_memory {fact}
	"write_todos":           {kind: compact.ToolPlan},                                       // write_todos {todos}
	"codebase_investigator": {kind: compact.ToolAgent, target: []string{"objective"}},       // subagent
	"delegate_to_agent":     {kind: compact.ToolAgent, target: argAgent},                    // subagent
}

// openHandsTools are OpenHands' actions (V0 event "action" kinds, for old
// events without tool metadata) and its agents' function names (V0
// CodeAct, V1 software-agent-sdk).
var openHandsTools = toolTable{
	"run":                  {kind: compact.ToolShell, target: argCommand},                           // CmdRunAction {command}
	"run_ipython":          {kind: compact.ToolShell, target: []string{"code"}},                     // IPythonRunCellAction {code}
	"read":                 {kind: compact.ToolRead, target: argPath},                               // FileReadAction {path}
	"write":                {kind: compact.ToolWrite, target: argPath},                              // FileWriteAction {path, content}
	"edit":                 {kind: compact.ToolWrite, target: argPath},                              // FileEditAction {path, …}
	"browse":               {kind: compact.ToolWeb, target: argURL},                                 // BrowseURLAction {url}
	"browse_interactive":   {kind: compact.ToolWeb, target: []string{"browser_actions"}},            // BrowseInteractiveAction
	"delegate":             {kind: compact.ToolAgent, target: argAgent},                             // AgentDelegateAction {agent, inputs}
	"finish":               {kind: compact.ToolOther, target: []string{"message", "final_thought"}}, // AgentFinishAction
	"think":                {kind: compact.ToolOther, target: []string{"thought"}},                  // AgentThinkAction
	"execute_bash":         {kind: compact.ToolShell, target: argCommand},                           // CodeAct execute_bash {command}
	"execute_ipython_cell": {kind: compact.ToolShell, target: []string{"code"}},                     // CodeAct execute_ipython_cell {code}
	"str_replace_editor":   editor,                                                                  // CodeAct str_replace_editor {command, path}
	"edit_file":            {kind: compact.ToolWrite, target: argPath},                              // CodeAct LLM-based edit_file {path}
	"web_read":             {kind: compact.ToolWeb, target: argURL},                                 // CodeAct web_read {url}
	"browser":              {kind: compact.ToolWeb, target: []string{"code"}},                       // CodeAct browser {code}
	"task_tracker":         {kind: compact.ToolPlan},                                                // task_tracker {command, task_list}
	"terminal":             {kind: compact.ToolShell, target: argCommand},                           // V1 terminal {command}
	"file_editor":          editor,                                                                  // V1 file_editor {command, path}
	"browser_*":            {kind: compact.ToolWeb, target: argURL},                                 // V1 browser_navigate {url}, browser_click …
	"glob":                 {kind: compact.ToolSearch, target: argQuery},                            // V1 glob {pattern}
	"grep":                 {kind: compact.ToolSearch, target: argQuery},                            // V1 grep {pattern}
	"planning_file_editor": editor,                                                                  // V1 planning agent's editor
}

// sweAgentTools are SWE-agent's commands (tools/ bundles), as function
// names in function-calling runs and as the first word of an action in
// the others.
var sweAgentTools = toolTable{
	"bash":               {kind: compact.ToolShell, target: argCommand},                                // bash {command}
	"str_replace_editor": editor,                                                                       // edit_anthropic bundle {command, path}
	"open":               {kind: compact.ToolRead, target: []string{"path", "file"}, opens: true},      // windowed: open {path, line_number}
	"goto":               {kind: compact.ToolRead, onOpen: true},                                       // windowed: moves the open file's window
	"scroll_up":          {kind: compact.ToolRead, onOpen: true},                                       // windowed
	"scroll_down":        {kind: compact.ToolRead, onOpen: true},                                       // windowed
	"create":             {kind: compact.ToolWrite, target: []string{"filename", "path"}, opens: true}, // windowed: create {filename}, and opens it
	"edit":               {kind: compact.ToolWrite, onOpen: true},                                      // windowed_edit_*: edit {search, replace} or {start_line, end_line, replacement_text}
	"insert":             {kind: compact.ToolWrite, onOpen: true},                                      // windowed_edit_linting: insert {text, line}
	"append":             {kind: compact.ToolWrite, onOpen: true},                                      // windowed_edit_linting: append {text}
	"search_file":        {kind: compact.ToolSearch, target: []string{"search_term"}},                  // search: search_file {search_term, file}
	"search_dir":         {kind: compact.ToolSearch, target: []string{"search_term"}},                  // search: search_dir {search_term, dir}
	"find_file":          {kind: compact.ToolSearch, target: []string{"file_name"}},                    // search: find_file {file_name, dir}
	"filemap":            {kind: compact.ToolRead, target: []string{"file_path"}},                      // filemap {file_path}
	"submit":             {kind: compact.ToolOther},                                                    // review_on_submit: ends the run
	"exit_forfeit":       {kind: compact.ToolOther},                                                    // forfeit
}

// miniSWEAgentTools are mini-swe-agent's: one shell, whose command says
// what it does.
var miniSWEAgentTools = toolTable{
	"bash": {kind: compact.ToolShell, target: argCommand}, // the ```bash block (or, in 2.x, the bash tool call)
}

// genericTools are the tool names common agent frameworks give the model
// through the OpenAI, Anthropic and Responses APIs (their own server tools
// included), for files of those formats and for tools an agent's table
// does not list.
var genericTools = toolTable{
	// Shells and code runners.
	"bash":              {kind: compact.ToolShell, target: argCommand}, // Anthropic bash tool, most frameworks
	"shell":             {kind: compact.ToolShell, target: argCommand}, // OpenAI shell / local_shell, Codex-style agents
	"sh":                {kind: compact.ToolShell, target: argCommand},
	"terminal":          {kind: compact.ToolShell, target: argCommand}, // OpenHands SDK
	"run_command":       {kind: compact.ToolShell, target: argCommand},
	"execute_command":   {kind: compact.ToolShell, target: argCommand}, // Cline, Roo Code
	"run_shell_command": {kind: compact.ToolShell, target: argCommand},
	"run_terminal_cmd":  {kind: compact.ToolShell, target: argCommand}, // Cursor
	"run_in_terminal":   {kind: compact.ToolShell, target: argCommand}, // Copilot agent
	"execute_bash":      {kind: compact.ToolShell, target: argCommand},
	"local_shell":       {kind: compact.ToolShell, target: argCommand},
	"code_interpreter":  {kind: compact.ToolShell, target: []string{"code", "input"}},   // OpenAI code interpreter
	"code_execution":    {kind: compact.ToolShell, target: []string{"code", "command"}}, // Anthropic code execution
	"python":            {kind: compact.ToolShell, target: []string{"code", "input"}},
	"execute_python":    {kind: compact.ToolShell, target: []string{"code"}},
	"ipython":           {kind: compact.ToolShell, target: []string{"code"}},
	// Editors with sub-commands.
	"str_replace_editor":          editor, // Anthropic text editor (2024), SWE-agent, OpenHands
	"str_replace_based_edit_tool": editor, // Anthropic text editor (2025)
	"text_editor":                 editor,
	"file_editor":                 editor, // OpenHands SDK
	// Files.
	"read_file":       {kind: compact.ToolRead, target: argPath},
	"view_file":       {kind: compact.ToolRead, target: argPath},
	"open_file":       {kind: compact.ToolRead, target: argPath},
	"read":            {kind: compact.ToolRead, target: argPath},
	"write_file":      {kind: compact.ToolWrite, target: argPath},
	"create_file":     {kind: compact.ToolWrite, target: argPath},
	"write_to_file":   {kind: compact.ToolWrite, target: argPath}, // Cline
	"write":           {kind: compact.ToolWrite, target: argPath},
	"edit":            {kind: compact.ToolWrite, target: argPath},
	"edit_file":       {kind: compact.ToolWrite, target: argPath}, // Cursor {target_file}
	"replace_in_file": {kind: compact.ToolWrite, target: argPath}, // Cline
	"apply_diff":      {kind: compact.ToolWrite, target: argPath}, // Roo Code
	"insert_content":  {kind: compact.ToolWrite, target: argPath}, // Roo Code
	"search_replace":  {kind: compact.ToolWrite, target: argPath},
	"apply_patch":     {kind: compact.ToolWrite, target: argPatch}, // OpenAI apply_patch (Codex's format)
	"delete_file":     {kind: compact.ToolWrite, target: argPath},
	// Listing and searching.
	"list_files":      {kind: compact.ToolList, target: argDir}, // Cline
	"list_dir":        {kind: compact.ToolList, target: argDir}, // Cursor
	"list_directory":  {kind: compact.ToolList, target: argDir},
	"ls":              {kind: compact.ToolList, target: argDir},
	"grep":            {kind: compact.ToolSearch, target: argQuery},
	"grep_search":     {kind: compact.ToolSearch, target: argQuery}, // Cursor
	"search_files":    {kind: compact.ToolSearch, target: argQuery}, // Cline {regex}
	"codebase_search": {kind: compact.ToolSearch, target: argQuery}, // Cursor
	"file_search":     {kind: compact.ToolSearch, target: argQuery}, // Cursor, OpenAI file_search
	"search":          {kind: compact.ToolSearch, target: argQuery},
	"glob":            {kind: compact.ToolSearch, target: argQuery},
	"find_files":      {kind: compact.ToolSearch, target: argQuery},
	// The web.
	"web_search":         {kind: compact.ToolWeb, target: argQuery}, // Anthropic and OpenAI server tools
	"web_search_preview": {kind: compact.ToolWeb, target: argQuery}, // OpenAI Responses
	"search_web":         {kind: compact.ToolWeb, target: argQuery},
	"google_search":      {kind: compact.ToolWeb, target: argQuery},
	"web_fetch":          {kind: compact.ToolWeb, target: argURL}, // Anthropic server tool
	"fetch":              {kind: compact.ToolWeb, target: argURL}, // MCP fetch server
	"fetch_url":          {kind: compact.ToolWeb, target: argURL},
	"browse":             {kind: compact.ToolWeb, target: argURL},
	"browser":            {kind: compact.ToolWeb, target: argURL},
	"open_url":           {kind: compact.ToolWeb, target: argURL},
	// Plans and subtasks.
	"todo_write":       {kind: compact.ToolPlan},
	"update_plan":      {kind: compact.ToolPlan},
	"write_todos":      {kind: compact.ToolPlan},
	"task_tracker":     {kind: compact.ToolPlan}, // OpenHands SDK
	"update_todo_list": {kind: compact.ToolPlan}, // Roo Code
	"task":             {kind: compact.ToolAgent, target: argAgent},
	"agent":            {kind: compact.ToolAgent, target: argAgent},
	"delegate":         {kind: compact.ToolAgent, target: argAgent},
	"new_task":         {kind: compact.ToolAgent, target: []string{"message", "mode"}}, // Roo Code
	"transfer_to_*":    {kind: compact.ToolAgent},                                      // OpenAI Agents SDK handoffs
	// Others a framework defines.
	"computer":              {kind: compact.ToolOther, target: []string{"action"}}, // Anthropic computer use
	"finish":                {kind: compact.ToolOther, target: []string{"message"}},
	"submit":                {kind: compact.ToolOther},
	"attempt_completion":    {kind: compact.ToolOther, target: []string{"result"}},   // Cline
	"ask_followup_question": {kind: compact.ToolOther, target: []string{"question"}}, // Cline
	"think":                 {kind: compact.ToolOther, target: []string{"thought"}},
}

// formatTools says which table each format's reader tags by. The API
// formats carry any framework's tools; genericTools covers them.
var formatTools = map[Name]toolTable{
	ClaudeCode:   claudeCodeTools,
	Codex:        codexTools,
	GeminiCLI:    geminiTools,
	OpenHands:    openHandsTools,
	SWEAgent:     sweAgentTools,
	MiniSWEAgent: miniSWEAgentTools,
}

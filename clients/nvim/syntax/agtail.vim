" Syntax of agtail transcript buffers (lua/agtail/render.lua writes them).
if exists('b:current_syntax')
  finish
endif

syntax match agtailHeader     /^# .*$/
syntax match agtailLabel      /\[\(imported\|archived\|subagent\)[^]]*\]/ contained containedin=agtailHeader
syntax match agtailSeq        /^\[\d\+\]/ nextgroup=agtailUser,agtailAssistant,agtailThinking,agtailTool,agtailOther skipwhite
syntax match agtailUser       /user\>/ contained
syntax match agtailAssistant  /assistant\( text\)\?\>/ contained
syntax match agtailThinking   /assistant thinking\>/ contained
syntax match agtailOther      /\(hook\|system\|summary\|unknown\|text\)\>.*$/ contained
syntax match agtailTool       /⚙ \S\+/ contained contains=agtailGear
syntax match agtailGear       /⚙/ contained
syntax match agtailError      /✗ error/
syntax match agtailSubagent   /→ \S\+:\S\+/
syntax match agtailTime       /\d\{4}-\d\d-\d\d \d\d:\d\d$/
syntax match agtailIn         /^    in: /
syntax match agtailOut        /^   out: /
syntax match agtailMore       /^    … \d\+ more lines.*$/

highlight default link agtailHeader    Comment
highlight default link agtailLabel     WarningMsg
highlight default link agtailSeq       LineNr
highlight default link agtailUser      Statement
highlight default link agtailAssistant Identifier
highlight default link agtailThinking  Comment
highlight default link agtailOther     PreProc
highlight default link agtailTool      Function
highlight default link agtailGear      Special
highlight default link agtailError     ErrorMsg
highlight default link agtailSubagent  Underlined
highlight default link agtailTime      Comment
highlight default link agtailIn        Type
highlight default link agtailOut       Type
highlight default link agtailMore      NonText

let b:current_syntax = 'agtail'

"""The words around the parts of a prompt, in every language detection covers.

- **Connectives** that open a part (``lead``): a change of topic ("Separately,",
  "Also, unrelated:", "By the way", übrigens, por cierto, кстати, 另外, ところで, 그런데),
  an addition ("Also,", "Plus", También, И ещё:, Ayrıca, Aur haan, أيضاً، 还有, それと,
  그리고), an ordinal ("First,", "Secondly,", Erstens, Во-первых, أولاً, 首先), a sequence
  that makes the part lean on the one before ("Then", Puis, luego, затем, phir, ثم, 然后),
  and a plain "and" (und, et, y, e, и, ve, aur, और, و). They are left out of what is
  sent and say how strongly the part stands apart.
- **Headers** that only announce the parts ("Two questions:", "Quick ones:", Zwei
  kurze Fragen:, سؤالان:, 两个问题：): not sent with any part.
- **Instructions** about the answers ("Reply in Spanish.", "Use metric units.", "Be
  brief.", "Answer in one sentence each:", 请简要回答, 簡潔に答えてください, 짧게 답해
  주세요, Kısaca cevapla, أجب باختصار): shared, sent with every part.
- **Lead-ins** that point at the parts ("Explain the following:", "Answer these:"):
  shared context, never a part of their own.
- How a sentence without a question mark can still ask: a question word or an
  imperative at its start (or, in Hindi, Turkish, Japanese and Korean, at its end).
"""

from __future__ import annotations

import re

__all__ = [
    "ASKS_IN_A_STATEMENT",
    "HEADER",
    "IMPERATIVE",
    "INSTRUCTION",
    "LEAD",
    "LEADIN",
    "MY_NEXT_QUESTION",
    "POSTSCRIPT",
    "REQUEST",
    "WH_START",
    "Gated",
    "lead_of",
]

_LETTERS = re.compile(r"[^\W\d_]+")
_ALTERNATIVE_START = re.compile(
    r"(?:(?<=\(\?:)|(?<=\|)|(?<=>)|(?<=\^)|(?<=\\W\*)|(?<=\)\?)|(?<=\)\*)|(?<=\\s\+)|(?<=\\s\*)|^)"
    r"([^\W\d_]+)(\[|\(|\\w)?"
)
_FIRST_WORD = re.compile(r"[\W_]*([^\W\d_]*)")
_SPACED = re.compile(r"[A-Za-z\u00c0-\u024f\u0400-\u04ff]")


class Gated:
    """A pattern anchored at the start of a text, tried only when the text's first word
    (its first character, in scripts written without spaces or with prefixes) is one
    the pattern can begin with: the patterns below are long alternations, and most
    texts start with none of their words."""

    def __init__(self, pattern: re.Pattern[str], always: str = "") -> None:
        self.pattern = pattern
        self.words: set[str] = set()
        self.prefixes: set[str] = set()  # words the pattern goes on from ("quant[oaie]")
        self.chars: set[str] = set(always)
        for m in _ALTERNATIVE_START.finditer(pattern.pattern):
            word = m.group(1).lower()
            if not _SPACED.match(word):
                self.chars.add(word[0])
            elif m.group(2):
                self.prefixes.add(word)
            else:
                self.words.add(word)
        alternatives = "|".join(re.escape(p) for p in sorted(self.prefixes, key=len, reverse=True))
        self.prefix = re.compile(alternatives or r"(?!x)x")

    def match(self, text: str, pos: int = 0) -> re.Match[str] | None:
        start = _FIRST_WORD.match(text, pos)
        if start is None:
            return None
        at = start.start(1)
        if at >= len(text):
            return None
        first = text[at]
        if first.isdigit() or first in self.chars or (pos < at and text[at - 1] in self.chars):
            return self.pattern.match(text, pos)
        low = start.group(1).lower()
        if not low:
            return None
        if low in self.words or self.prefix.match(low):
            return self.pattern.match(text, pos)
        return None


_P = r"\s*(?:[,:;.!—–،؛-]+\s*|\s)"  # what follows a connective: punctuation or a space
_PP = r"\s*[,:;.—–،؛-]+\s*"  # ... punctuation only (ordinals: "First," not "First World War")
_PC = r"(?:\s*[,，、:：]\s*|\s+)"  # after a CJK connective: punctuation or a space

# Each connective kind, one alternation for every language.
_STRONG = (
    # en
    r"(?:(?:and|also|oh|ok|okay|plus|now|aur|und|et|y|e|и|і|а|en|i|dan|và)[,\s]+){0,2}"
    r"(?:(?:totally|completely|entirely)\s+)?"
    r"(?:unrelated(?:\s+(?:question|but|note|to\s+that))?|on\s+(?:an?\s+)?(?:unrelated|different|other|"
    r"separate|another)\s+(?:note|topic|subject)|(?:a\s+|one\s+)?(?:different|separate|other|another)\s+"
    r"(?:question|topic)|separately|by\s+the\s+way|btw|"
    # a postscript, in every language (POSTSCRIPT below)
    r"(?:ps|p\.\s?s\.?|pd(?=[.:])|p\.d\.|nb(?=[.:\s])|n\.\s?b\.?|not(?=\s*:)|post-?scriptum|posdata|nachtrag|"
    r"dopisek|п\.\s?с\.?|пс(?=[.:])|ملاحظة|ملحوظة|पुनश्च|tái\s+bút|t\.b\.)|"
    r"side\s+(?:question|note)|random\s+question|"
    r"changing\s+(?:the\s+)?(?:topic|subject)|switching\s+(?:gears|topics)|one\s+more\s+(?:thing|question)|"
    r"(?:and\s+)?(?:one\s+)?last\s+(?:question|thing)|"
    # de fr es it pt
    r"übrigens|nebenbei(?:\s+bemerkt)?|(?:eine\s+)?(?:ganz\s+)?andere\s+frage|noch\s+was\s+anderes|"
    r"themawechsel|unabhängig\s+davon|au\s+fait|(?:une\s+)?autre\s+question|d'ailleurs|sans\s+rapport|"
    r"rien\s+à\s+voir|changement\s+de\s+sujet|séparément|por\s+cierto|a\s+propósito|otra\s+pregunta|"
    r"cambiando\s+de\s+tema|por\s+otro\s+lado|por\s+outro\s+lado|sin\s+relación|a\s+proposito|tra\s+l'altro|(?:un'\s*)?altra\s+domanda|"
    r"cambiando\s+argomento|per\s+inciso|aliás|outra\s+pergunta|mudando\s+de\s+assunto|"
    r"por\s+falar\s+nisso|"
    # ru tr ar hi hi-en
    r"кстати|(?:и\s+)?другой\s+вопрос|ещё\s+один\s+вопрос|еще\s+один\s+вопрос|не\s+по\s+теме|"
    r"на\s+другую\s+тему|отдельный\s+вопрос|bu\s+arada|başka\s+bir\s+soru|alakasız\s+(?:ama|bir\s+soru)|"
    r"konu\s+dışı|ayrı\s+bir\s+soru|و?بالمناسبة|و?سؤال\s+آخر|و?على\s+صعيد\s+آخر|بعيدا\s+عن\s+ذلك|"
    r"بعيداً\s+عن\s+ذلك|بشكل\s+منفصل|موضوع\s+آخر|वैसे|एक\s+और\s+सवाल|दूसरा\s+सवाल|अलग\s+सवाल|"
    r"waise|vaise|ek\s+aur\s+(?:sawal|sawaal|question)|alag\s+(?:sawal|question)|"
    r"dusra\s+(?:sawal|question)|(?:ek\s+)?aur\s+ek\s+(?:sawal|sawaal|question)|"
    # nl pl uk vi id
    r"trouwens|overigens|(?:een\s+)?andere\s+vraag|los\s+daarvan|ander\s+onderwerp|"
    r"przy\s+okazji|swoją\s+drogą|(?:inne|osobne|jeszcze\s+jedno)\s+pytanie|zmieniając\s+temat|"
    r"до\s+речі|(?:окреме|інше|ще\s+одне)\s+питання|не\s+по\s+темі|на\s+іншу\s+тему|"
    r"nhân\s+tiện|tiện\s+thể|à\s+mà|câu\s+hỏi\s+khác|không\s+liên\s+quan|"
    r"ngomong-ngomong|omong-omong|pertanyaan\s+lain|(?:oh\s+)?iya?\s+satu\s+lagi|di\s+luar\s+itu"
    r")"
)
_STRONG_CJK = (
    r"(?:追伸|附言|又及|추신|另外(?:问一下|一个问题)?|顺便(?:问一下|问下|问问|说一下|一提)?|順便(?:問一下)?|换个话题|另一个问题|"
    r"还有一个问题|题外话|ところで|ちなみに|別の質問(?:です(?:が)?)?|話は変わりますが|それとは別に|그런데|근데|그나저나|"
    r"참고로|또\s*다른\s*질문(?:인데요|은|입니다)?|다른\s*질문(?:인데요|입니다)?|별개로|그건\s*그렇고)"
)
_ALSO = (
    r"(?:also|plus(?=\s*,)|additionally|and\s+also|oh\s+and(?:\s+also)?|and\s+another(?:\s+(?:one|thing))?|moreover|"
    r"furthermore|next\s+question|another\s+(?:one|question)|"
    r"außerdem|und\s+auch|(?:und\s+)?noch\s+(?:etwas|was|eine\s+frage)|und\s+noch|zudem|zusätzlich|"
    r"aussi|et\s+aussi|également|de\s+plus|en\s+plus|encore\s+une\s+(?:chose|question)|et\s+encore|"
    r"par\s+ailleurs|autre\s+chose|también|además|y\s+también|asimismo|y\s+otra\s+cosa|otra\s+cosa|"
    r"inoltre|e\s+anche|in\s+più|(?:un'\s*)?altra\s+cosa|também|além\s+disso|e\s+também|"
    r"mais\s+uma|outra\s+coisa|"
    r"(?:и\s+|а\s+)?ещё|(?:и\s+|а\s+)?еще|также|кроме\s+того|а\s+также|плюс|"
    r"ayrıca|bir\s+de|ek\s+olarak|bunun\s+yanında|bir\s+şey\s+daha|bir\s+soru\s+daha|"
    r"وأيضاً|وأيضا|أيضاً|أيضا|وكذلك|كذلك|بالإضافة\s+إلى\s+ذلك|إضافة\s+إلى\s+ذلك|"
    r"साथ\s+ही|इसके\s+अलावा|और\s+हाँ|और\s+एक\s+बात|एक\s+बात\s+और|"
    r"aur\s+haan|aur\s+han|aur\s+ek\s+(?:baat|cheez|sawal|question)|saath\s+hi|iske\s+alawa|"
    r"ek\s+aur\s+baat|"
    # nl pl uk vi id
    r"ook|daarnaast|bovendien|verder|en\s+nog|nog\s+(?:een\s+vraag|iets)|"
    r"poza\s+tym|oprócz\s+tego|(?:i\s+|a\s+)?jeszcze|także|również|"
    r"(?:і\s+|а\s+|й\s+)?ще|також|крім\s+того|а\s+також|"
    r"còn\s+nữa|ngoài\s+ra|thêm\s+nữa|với\s+lại|thêm\s+một\s+câu|"
    r"selain\s+itu|juga|satu\s+lagi|terus|tambahan)"
)
_ALSO_CJK = r"(?:(?:아\s*참|아|참)[,\s]+그리고|还有|此外|再问一下|再就是|另外还有|还想问|それと|あと|それから|また|さらに|もう一つ|もうひとつ|加えて|그리고\s*또|그리고|또한|또|추가로|하나\s*더|아울러)"
_ORDINAL = (
    r"(?:first(?:ly)?|second(?:ly)?|third(?:ly)?|fourth(?:ly)?|fifth(?:ly)?|finally|lastly|"
    r"and\s+finally|to\s+(?:start|begin)|first\s+(?:question|thing|off)|second\s+(?:question|thing)|"
    r"third\s+(?:question|thing)|erstens|zweitens|drittens|viertens|zuerst|als\s+erstes|"
    r"zum\s+schluss|schließlich|zuletzt|premièrement|deuxièmement|troisièmement|d'abord|"
    r"en\s+premier|enfin|pour\s+finir|primero|segundo|tercero|en\s+primer\s+lugar|"
    r"en\s+segundo\s+lugar|por\s+último|finalmente|primo|secondo|terzo|innanzitutto|"
    r"per\s+prima\s+cosa|infine|primeiro|terceiro|em\s+primeiro\s+lugar|em\s+segundo\s+lugar|"
    r"во-первых|во-вторых|в-третьих|наконец|birincisi|ikincisi|üçüncüsü|ilk\s+olarak|"
    r"ikinci\s+olarak|son\s+olarak|öncelikle|أولاً|أولا|ثانياً|ثانيا|ثالثاً|ثالثا|أخيراً|أخيرا|"
    r"पहला|दूसरा|तीसरा|पहले\s+तो|अंत\s+में|pehla|pehli\s+baat|doosra|dusra|teesra|"
    # nl pl uk vi id, and "and lastly"
    r"ten\s+eerste|ten\s+tweede|ten\s+derde|tot\s+slot|als\s+laatste|po\s+pierwsze|po\s+drugie|"
    r"po\s+trzecie|na\s+koniec|по-перше|по-друге|по-третє|нарешті|thứ\s+nhất|thứ\s+hai|thứ\s+ba|"
    r"cuối\s+cùng|trước\s+hết|pertama|kedua|ketiga|terakhir|and\s+lastly)"
)
_ORDINAL_CJK = (
    r"(?:首先|其次|再次|最后|第[一二三四]个问题(?:是)?|まず|最後に|[一二三1-3]つ目(?:は|の質問は)?|첫째|둘째|셋째|"
    r"(?:첫|두|세)\s*번째(?:로|는|\s*질문은)?|먼저|마지막으로)"
)
# "first is there a way ...", "second whats ...": an ordinal typed without its comma, before
# a question word or an inverted verb.
_ORDINAL_BARE = r"(?:first(?:ly)?|second(?:ly)?|third(?:ly)?|fourth|finally|lastly)"
_ASKS_NEXT = (
    r"(?:is|are|was|were|can|could|should|would|do|does|did|how|what|whats|what's|why|who|where|"
    r"when|which)\b"
)
_THEN = (
    r"(?:then|and\s+then|after\s+that|afterwards|dann|danach|anschließend|daraufhin|puis|ensuite|"
    r"après\s+(?:ça|cela)|luego|después(?!\s+de)|a\s+continuación|poi|quindi|in\s+seguito|"
    r"depois(?!\s+d[aoe]\b)|em\s+seguida|затем|потом|после\s+этого|далее|sonra|ardından|"
    r"daha\s+sonra|bundan\s+sonra|ثم|بعد\s+ذلك|بعدها|फिर|उसके\s+बाद|इसके\s+बाद|phir|fir|"
    r"uske\s+baad|iske\s+baad)"
)
_THEN_CJK = r"(?:然后|接着|之后|次に|その後|그다음|그\s*다음|그런\s*다음|그리고\s*나서)"
_AND = r"(?:and|or|und|oder|et|ou|y|e|\u0438|\u0430|\u0438\u043b\u0438|ve|peki|aur|और|या|तथा|أو)"
_AND_AR = r"و(?=(?:ما|ماذا|كيف|من|متى|أين|كم|هل|لماذا|أي|ما)(?:\s|$))"

# A postscript ("P.S.", "NB:", Not:, 추신:, 追伸): what came before it is a message of
# its own, so the text before it is a part even when it only states what is needed.
POSTSCRIPT = re.compile(
    r"^\W*(?:ps|p\.\s?s|pd|p\.d|n\.?\s?b|not|post-?scriptum|posdata|nachtrag|dopisek|п\.\s?с|пс|"
    r"ملاحظة|ملحوظة|पुनश्च|tái\s+bút|t\.b|追伸|附言|又及|추신)\W*$",
    re.IGNORECASE,
)

LEAD = Gated(
    re.compile(
        rf"[\s*_]*(?:(?P<strong>{_STRONG}){_P}|(?P<strong_cjk>{_STRONG_CJK}){_PC}|"
        rf"(?P<strong_bare>另外)(?=我|请|帮|想|还|再|能)|"
        rf"(?P<ordinal>{_ORDINAL}){_PP}|(?P<ordinal_cjk>{_ORDINAL_CJK}){_PC}|"
        rf"(?P<ordinal_bare>{_ORDINAL_BARE})\s+(?={_ASKS_NEXT})|"
        rf"(?P<also>{_ALSO}){_P}|(?P<also_cjk>{_ALSO_CJK}){_PC}|"
        rf"(?P<then>{_THEN}){_P}|(?P<then_cjk>{_THEN_CJK}){_PC}|"
        rf"(?P<and>{_AND}),?\s+|(?P<and_ar>{_AND_AR}))",
        re.IGNORECASE,
    )
)
"""A connective at the start of a part; the group that matched names its kind."""

# Words that end a connective match too early if taken alone ("Also" in "Also known as").
_NOT_AFTER_ALSO = re.compile(r"known\b|called\b", re.IGNORECASE)


def lead_of(text: str) -> tuple[str, str]:
    """The connective at the start of ``text`` as written, and its kind (``strong``,
    ``also``, ``ordinal``, ``then``, ``and``), or ``("", "")``. A connective followed
    by nothing is none."""
    m = LEAD.match(text)
    if m is None or m.end() >= len(text.rstrip()):
        return "", ""
    kind = (m.lastgroup or "").removesuffix("_cjk").removesuffix("_ar").removesuffix("_bare")
    if kind == "also" and _NOT_AFTER_ALSO.match(text, m.end()):
        return "", ""
    return text[: m.end()].strip(), kind


# A statement that asks: a need ("Also need a punch recipe"), a wish to ask or know ("Poza
# tym chciałbym zapytać, czy ..."), or a "whether" clause after "my second question is".
MY_NEXT_QUESTION = re.compile(
    r"^\W*(?:"
    r"my\s+(?:second|next|other|last|third|final)\s+question\s+is|"
    r"mi\s+(?:segunda|otra|última)\s+pregunta\s+es|meine\s+(?:zweite|andere|letzte)\s+frage\s+ist|"
    r"ma\s+(?:deuxième|seconde|autre|dernière)\s+question\s+(?:est|c'est)|"
    r"la\s+mia\s+(?:seconda|altra|ultima)\s+domanda\s+è|minha\s+(?:segunda|outra|última)\s+pergunta\s+é|"
    r"мой\s+(?:второй|другой|последний)\s+вопрос|ikinci\s+sorum|"
    r"moje\s+(?:drugie|kolejne|ostatnie)\s+pytanie\s+(?:to|brzmi)|mijn\s+(?:tweede|andere|laatste)\s+vraag\s+is|"
    r"pertanyaan\s+(?:kedua|berikutnya|terakhir)\s+(?:saya|aku)|câu\s+hỏi\s+thứ\s+hai|"
    r"моє\s+(?:друге|інше|останнє)\s+питання"
    r")\b",
    re.IGNORECASE,
)
"""A sentence that says it is the next question: "my second question is whether ...",
"moje drugie pytanie to ...": kept whole in what is sent (what follows is no question
on its own)."""
ASKS_IN_A_STATEMENT = re.compile(
    r"^\W*(?:"
    r"my\s+(?:second|next|other|last|third|final)\s+question|"
    r"(?:i\s+)?(?:also\s+)?(?:need|want|'d\s+like|would\s+like|am\s+looking\s+for)\s+(?:a|an|some|the|"
    r"\d+|to\s+know|help|ideas?|tips?|advice|recommendations?)\b|whether\b|"
    r"(?:ich\s+)?(?:brauche|möchte\s+(?:gerne\s+)?wissen|hätte\s+gern)\b|ob\b|"
    r"(?:j'ai\s+besoin|je\s+voudrais\s+(?:savoir|demander)|je\s+cherche)\b|"
    r"(?:necesito|quisiera\s+(?:saber|preguntar)|quería\s+preguntar|busco)\b|"
    r"(?:mi\s+serve|ho\s+bisogno|vorrei\s+(?:sapere|chiedere)|cerco)\b|"
    r"(?:preciso|queria\s+(?:saber|perguntar)|gostaria\s+de\s+(?:saber|perguntar))\b|"
    r"(?:мне\s+)?(?:нужен|нужна|нужно|нужны)\b|(?:хотел|хотела)\s+бы\s+(?:спросить|узнать)|"
    r"(?:chciał(?:a)?bym|chcę)\s+(?:zapytać|wiedzieć|się\s+dowiedzieć)|potrzebuję\b|"
    r"(?:ik\s+)?(?:wil\s+(?:graag\s+)?weten|zoek)\b|"
    r"(?:saya\s+|aku\s+)?(?:butuh|perlu|mau\s+tanya|ingin\s+tahu)\b|"
    r"(?:tôi\s+|mình\s+)?(?:cần|muốn\s+hỏi)\b|"
    r"(?:хотів|хотіла)\s+б\s+(?:спитати|дізнатися)|(?:мені\s+)?потрібн\w+|"
    r"sormak\s+istiyorum|أريد|أحتاج|मुझे\s+\S+\s+चाहिए|mujhe\s+\w+\s+chahiye"
    r")(?!\s+(?:que|dass|che|что|чтобы|żeby|że|dat|bahwa|supaya|rằng|để|it|them|this|that|ob|es)\b)",
    re.IGNORECASE,
)

# --- headers: a count of questions, nothing else ----------------------------------------
HEADER = Gated(
    re.compile(
        r"^\W*(?:(?:hey|hi|hello|ok|okay|so|bro|guys|dude|yo|bhai|yaar|sir|hola|hallo|salut)\W+)*(?:"
        # en
        r"(?:i\s+(?:have|got|need)\s+|i'?ve\s+got\s+|here\s+(?:are|is)\s+|"
        r"(?:i\s+)?need\s+(?:some\s+)?help\s+(?:with|on)\s+|"
        r"(?:can|could)\s+(?:you|u)\s+help\s+(?:me\s+)?(?:with|w/)\s+|"
        r"(?:i\s+)?(?:need|want|wanna|would\s+like|'d\s+like)\s+to\s+(?:know|ask(?:\s+you)?)\s+|(?:just\s+)?(?:some|a\s+few|(?:a\s+)?couple(?:\s+of)?|"
        r"few|several|my|the|two|three|four|five|\d+)\s+)*(?:(?:more|quick|short|simple|random|unrelated|"
        r"different|separate|small|little|easy|general|trivia|totally|completely)\s+)*(?:questions?|things|"
        r"ones|qs|queries|asks|topics|requests)(?:\s+(?:for\s+you|for\s+today|today|please|here|below|lol|"
        r"then|to\s+ask))*|"
        # de fr es it pt
        r"(?:ich\s+habe\s+|ich\s+brauche\s+|hier\s+sind\s+|noch\s+)?(?:zwei|drei|vier|\d+|ein\s+paar|einige|mehrere)\s+"
        r"(?:kurze\s+|schnelle\s+|einfache\s+|verschiedene\s+)?(?:fragen|dinge|sachen)(?:\s+an\s+dich)?|"
        r"(?:j'ai\s+besoin\s+de\s+|j'ai\s+|voici\s+)?(?:deux|trois|quatre|\d+|quelques|plusieurs)\s+(?:petites\s+)?"
        r"(?:questions|choses)(?:\s+(?:rapides|courtes|simples))?|"
        r"(?:tengo\s+|necesito\s+(?:ayuda\s+con\s+)?)?(?:dos|tres|cuatro|\d+|unas|algunas|varias)\s+"
        r"(?:preguntas|cosas|dudas)"
        r"(?:\s+(?:rápidas|cortas|sencillas|rapiditas))?|"
        r"(?:ho\s+|mi\s+servono\s+)?(?:due|tre|quattro|\d+|alcune)\s+(?:domande|cose|curiosità)(?:\s+(?:veloci|brevi|"
        r"rapide|semplici))?|"
        r"(?:tenho\s+|preciso\s+de\s+)?(?:duas|dois|três|\d+|algumas|umas)\s+(?:perguntas|coisas|dúvidas)(?:\s+(?:rápidas|"
        r"curtas|simples))?|"
        # nl pl (not read word by word, but their headers are known)
        r"(?:ik\s+heb\s+|hier\s+zijn\s+)?(?:twee|drie|vier|\d+|een\s+paar|enkele)\s+(?:korte\s+|snelle\s+)?"
        r"(?:vragen|dingen)|"
        r"(?:mam\s+|potrzebuję\s+)?(?:dwa|dwie|trzy|cztery|\d+|kilka)\s+(?:krótkie\s+|szybkie\s+)?(?:pytania|pytanka|"
        r"sprawy|rzeczy)|"
        # uk vi id
        r"(?:у\s+мене\s+(?:є\s+)?)?(?:два|дві|три|чотири|\d+|пара|кілька|декілька)\s+(?:коротких\s+|швидких\s+)?"
        r"(?:питання|питань|запитання|запитань)|"
        r"(?:(?:mình|tôi|em|anh|chị|tớ)\s+có\s+)?(?:hai|ba|bốn|\d+|vài|mấy)\s+(?:câu\s+hỏi|điều|việc)"
        r"(?:\s+(?:nhỏ|nhanh|ngắn))?|"
        r"(?:(?:saya|aku|gue|gua)\s+(?:punya|ada)\s+)?(?:dua|tiga|empat|\d+|beberapa)\s+(?:pertanyaan|hal)"
        r"(?:\s+(?:singkat|cepat))?|"
        # ru tr ar hi hi-en
        r"(?:у\s+меня\s+)?(?:два|три|четыре|\d+|пара|несколько)\s+(?:коротких\s+|быстрых\s+|простых\s+)?"
        r"(?:вопроса|вопросов|вопросик\w*)|"
        r"(?:iki|İki|üç|Üç|dört|\d+|birkaç)\s+(?:kısa\s+|hızlı\s+|basit\s+)?(?:soru|sorum|şey)\w*(?:\s+var)?|"
        r"(?:لدي\s+|عندي\s+)?(?:سؤالان|سؤالين|ثلاثة\s+أسئلة|عدة\s+أسئلة|بعض\s+الأسئلة|\d+\s+أسئلة)|"
        r"(?:मेरे\s+)?(?:दो|तीन|चार|\d+|कुछ)\s+(?:सवाल|प्रश्न)(?:\s+(?:हैं|है))?|"
        r"(?:मुझे\s+)?(?:दो|तीन|चार|\d+|कुछ)\s+(?:चीज़ें|चीजें|बातें|सवाल)\s+(?:जाननी|पूछनी|जानने)\s+(?:हैं|है)|"
        r"(?:do|teen|char|\d+|kuch)\s+(?:sawal|sawaal|questions?|cheezein|cheezen|cheeze|baatein)"
        r"(?:\s+(?:hai|hain|the|batao|bataiye|puchni\s+hai|puchna\s+hai))?|"
        # zh ja ko
        r"(?:我有|问|请教|想问)?(?:两|二|三|四|几|\d+)(?:个|件)(?:小)?(?:问题|事)(?:[，,]?(?:请教一下|想问一下|想问问))?|"
        r"(?:質問が)?(?:二つ|2つ|三つ|3つ|いくつか)(?:の質問)?(?:あります|質問があります)?|"
        r"(?:質問|しつもん)(?:が)?(?:二つ|2つ|三つ|3つ)(?:あります)?|"
        r"(?:二|三|2|3)点(?:質問|お願い)(?:します|があります)?|"
        r"(?:질문|궁금한\s*(?:것|게))\s*(?:두|세|네|몇)\s*(?:개|가지)(?:요|있어요|있습니다)?|"
        r"(?:두|세|몇)\s*(?:가지|개)\s*(?:질문|물어볼게요|궁금해요)(?:이\s*있어요|이요|입니다)?"
        r")\W*$",
        re.IGNORECASE,
    )
)
"""A unit that only announces how many questions follow."""

# --- instructions about the answers ----------------------------------------------------
_LANGS = (
    r"english|spanish|french|german|italian|portuguese|russian|chinese|japanese|korean|arabic|"
    r"hindi|turkish|dutch|polish|[a-z]+ish|simple|plain|layman'?s|one|a|two|three|\d+|bullet|short|"
    r"full|formal|informal|the\s+same|lower-?case|upper-?case|markdown|json|table|list|emoji"
)
INSTRUCTION = Gated(
    re.compile(
        r"^\W*(?:(?:please|pls|plz|kindly)[,\s]+)?(?:"
        # en
        rf"(?:answer|reply|respond|write)\s+(?:only\s+|all\s+|each\s+|them\s+|everything\s+)?(?:in|using|with)\s+(?:{_LANGS})\b|"
        r"(?:answer|reply|respond)\b(?:\s+(?:each|all|them|every|both|briefly|concisely|shortly|simply|"
        r"quickly|honestly|in\s+\w+|like|as|with|without|only|using|for|one|to\s+each)\b[^.?!]{0,50})?\s*[.:!]?\s*$|"
        r"be\s+(?:brief|concise|short|succinct|specific|precise|clear|honest|detailed|thorough|direct)\b|"
        r"keep\s+(?:it|them|each|every|your|the|answers?|responses?|things|replies)\b|"
        r"make\s+(?:it|them|each|sure|the\s+answers?|your\s+answers?)\b|"
        r"use\s+(?:only\s+)?(?:metric|imperial|simple|plain|easy|short|bullet|a\s+table|tables|markdown|examples?|"
        r"sources|si\b|british|american|formal|informal|casual|layman|everyday|celsius|fahrenheit|kilometers|"
        r"miles|us\s+units|the\s+metric|numbers)\b|"
        r"(?:don'?t|do\s+not|no|avoid|never|without)\s+(?:use\s+|using\s+|give\s+|include\s+|add\s+)?"
        r"(?:explanations?|jargon|markdown|bullet|emojis?|code|details?|intro|preamble|more\s+than|"
        r"technical|long|fluff|extra|examples?)\b|"
        r"(?:short|brief|one-line|one\s+line|quick|concise|simple|detailed)\s+(?:answers?|replies|responses)"
        r"(?:\s+please)?\b|"
        r"(?:in|within|under|max(?:imum)?|at\s+most|no\s+more\s+than|less\s+than)\s+\d+\s+(?:words|"
        r"sentences|lines|characters|bullet\s+points|paragraphs)\b|"
        r"(?:in\s+)?(?:one|a\s+single|a|two|three|\d+)\s+(?:sentence|line|word|paragraph)s?\s+(?:each|per|max|only|"
        r"please|answers?)\b|"
        r"(?:format|structure)\s+(?:it|them|each|every|the|your|as)\b|"
        r"(?:include|add|give|cite|provide)\s+(?:your\s+)?(?:sources|references|citations|examples|an\s+example|"
        r"a\s+source|links)\b|"
        r"explain\s+(?:it\s+|them\s+|each\s+)?(?:like|as\s+if)\s+i'?m\b|eli5\b|"
        r"(?:for|as\s+if\s+(?:to|for)|like\s+(?:to|for)?)\s+(?:a\s+)?(?:beginner|kid|child|five-year-old|"
        r"\d+-year-old|\d+\s+year\s+old|layperson|non-expert)s?\b|"
        r"(?:just|only)\s+(?:the|give|answer|a|one|numbers?|yes|names?)\b|"
        r"(?:think|reason)\s+step\s+by\s+step\b|briefly\W*$|concisely\W*$|"
        # es
        r"(?:por\s+favor,?\s+)?(?:responde|responda|contesta|conteste|respóndeme|contéstame|respondé)\b|"
        r"(?:sé|sea)\s+(?:breve|conciso|concisa|claro|clara)\b|usa\s+(?:unidades|un\s+lenguaje|lenguaje|"
        r"ejemplos|palabras|el\s+sistema)\b|(?:en|con)\s+(?:pocas\s+palabras|una\s+(?:frase|oración|línea)|"
        r"palabras\s+sencillas)\b|respuestas?\s+(?:cortas|breves|corta|breve)\b|brevemente\W*$|"
        # de
        r"(?:antworte|antwortet|antworten\s+sie|beantworte)\b|bitte\s+(?:jeweils\s+|immer\s+)?(?:kurz|knapp|auf\s+\w+|nur)\b|"
        r"(?:sei|seien\s+sie)\s+(?:kurz|knapp|präzise)\b|fasse\s+dich\s+kurz|(?:verwende|benutze|nutze)\s+"
        r"(?:metrische|einfache|einfach|kurze|beispiele|nur)\b|(?:kurze|knappe)\s+antworten\b|"
        r"(?:in|mit)\s+(?:einem\s+satz|einfachen\s+worten|kurzen\s+sätzen|maximal)\b|(?:kurz|knapp)\s+bitte\b|"
        # fr
        r"(?:réponds|répondez|réponse)\b|(?:sois|soyez)\s+(?:bref|brève|concis|concise|clair)\b|"
        r"(?:utilise|utilisez)\s+(?:des\s+|un\s+|le\s+|les\s+)?(?:unités|mots|langage|exemples|termes)\b|"
        r"(?:en|avec)\s+(?:une\s+phrase|quelques\s+mots|des\s+mots\s+simples)\b|"
        r"réponses?\s+(?:courtes?|brèves?)\b|(?:fais|faites)\s+court\b|"
        # it pt
        r"(?:rispondi|rispondete|risponda)\b|(?:sii|sia)\s+(?:breve|conciso|concisa|chiaro)\b|"
        r"(?:usa|utilizza)\s+(?:unità|parole|un\s+linguaggio|esempi)\b|(?:in|con)\s+(?:una\s+frase|"
        r"poche\s+parole|parole\s+semplici)\b|risposte?\s+(?:brevi|corte|breve)\b|in\s+breve\W*$|"
        r"(?:responda|responde|respondam|me\s+responda)\b|(?:seja|sê)\s+(?:breve|conciso|claro|objetivo)\b|"
        r"(?:use|utilize)\s+(?:unidades|palavras|linguagem|exemplos)\b|(?:em|com)\s+(?:uma\s+frase|"
        r"poucas\s+palavras|palavras\s+simples)\b|respostas?\s+(?:curtas|breves|curta|breve)\b|"
        r"resumidamente\W*$|"
        # ru
        r"(?:отвечай|ответь|ответьте|отвечайте)\b|(?:кратко|коротко|вкратце)\W*$|"
        r"(?:кратко|коротко|вкратце)\s+(?:и\s+\w+\s+)?(?:ответь|отвечай|пожалуйста|объясни)|"
        r"(?:будь|будьте)\s+(?:краток|кратким|лаконичен|лаконичным)\b|(?:используй|используйте)\s+"
        r"(?:метрическ|прост|пример)\w*|(?:одним|в\s+одном|в\s+двух)\s+(?:предложением|словом|предложении|"
        r"словах)\b|без\s+(?:лишних|воды|подробностей|пояснений)|"
        # tr
        r"(?:kısaca|kısa|tek\s+cümleyle|bir\s+cümleyle|basitçe|türkçe|ingilizce)\s+(?:ve\s+\w+\s+)?"
        r"(?:cevapla|yanıtla|cevap\s+ver|açıkla|anlat)\w*\W*$|(?:cevapları|yanıtları)\s+kısa\b|"
        r"(?:metrik|basit)\s+\w+\s+kullan|"
        # ar
        r"(?:أجب|اجب|أجيبي|أجيبوا|أجيبني|رد|ردّ)(?:\s|$)|(?:باختصار|بإيجاز|بالعربية|باللغة\s+\S+|"
        r"بجملة\s+واحدة)\W*$|(?:استخدم|استعمل)\s+(?:وحدات|كلمات|لغة|أمثلة)|(?:كن|كوني)\s+(?:مختصرا|"
        r"مختصراً|موجزا|موجزاً)|"
        # hi hi-en
        r"(?:कृपया\s+)?(?:संक्षेप\s+में|हिंदी\s+में|अंग्रेज़ी\s+में|अंग्रेजी\s+में|एक\s+वाक्य\s+में|"
        r"सरल\s+शब्दों\s+में|छोटे\s+में)\s*(?:उत्तर|जवाब|बताइए|बताएं|बताओ|समझाइए)?|"
        r"(?:उत्तर|जवाब)\s+(?:दें|दीजिए|दो)\W*$|"
        r"(?:short|ek\s+line|hindi|english|simple\s+words|simple|detail|brief)\s+(?:me|mein|mai)\b|"
        r"(?:answer|jawab|reply)\s+(?:do|dena|dijiye|karo|dein)\W*$|"
        # zh ja ko
        r"(?:请)?(?:简要|简短|简单|简洁|用中文|用英文|用英语|用一句话|用简单的话|一句话)(?:地)?(?:回答|说明|解释|作答|说)|"
        r"(?:请)?(?:回答|作答)(?:得)?(?:简短|简洁|简要)|(?:回答|答案)(?:要|请)?(?:简短|简洁)|(?:请)?(?:使用|用)公制|"
        r"(?:簡潔に|手短に|短く|一言で|日本語で|英語で|簡単に|わかりやすく)(?:[^。？?]{0,8})?(?:答えて|回答して|説明して|教えて)|"
        r"(?:答えは|回答は)(?:簡潔に|短く)|"
        r"(?:짧게|간단히|간단하게|간략히|한국어로|영어로|한\s*문장으로|쉽게)\s*(?:대답|답|설명|답변|알려)|"
        r"(?:답변은|대답은)\s*(?:짧게|간단히)"
        r")",
        re.IGNORECASE,
    )
)
"""A unit that says how to answer (language, length, units, style): shared."""

# --- lead-ins that point at the parts ------------------------------------------------------
LEADIN = re.compile(
    r"\b(?:(?:the\s+)?following|below|these\s+(?:questions|ones|items|things)|as\s+follows|"
    r"folgenden?|folgende|suivantes?|ci-dessous|siguientes?|seguenti|seguintes?|следующие|"
    r"следующих|aşağıdaki|निम्नलिखित|neeche\s+(?:diye|wale))\b|التالية|التالي|以下|下面|下列|次の|다음|아래",
    re.IGNORECASE,
)

# --- asking without a question mark ----------------------------------------------------------
WH_START = Gated(
    re.compile(
        r"^\W*(?:(?:what|whats|what's|why|how|who|whos|who's|whom|whose|when|where|wheres|which)\b"
        r"(?!\s+(?:i|we|you|they|he|she|it)\b)|"
        r"(?:is|are|was|were|do|does|did|can|could|should|would|will|has|have)\s+(?:i|we|you|they|he|"
        r"she|it|there|this|that|the|a|an|my|your|our|any|anyone|someone)\b|"
        r"(?:warum|wieso|weshalb|wie|wer|wann|wo|woher|wohin|welche[rsnm]?|was)\b|"
        r"(?:pourquoi|comment|quel(?:le)?s?|combien|quand|où)\b|"
        r"(?:qué|cómo|cuál(?:es)?|quién(?:es)?|cuándo|dónde|cuánt[oa]s?|por\s+qué|¿|quien(?:es)?\b|cuant[oa]s?\b)|"
        r"(?:perché|cosa|chi|quale|quali|quant[oaie]|quando|dove)\b|"
        r"(?:o\s+que|qual|quais|quem|onde|por\s+que|quant[oa]s?)\b|"
        r"(?:что|почему|зачем|как|кто|где|когда|сколько|как\w+|каков\w*|котор\w+|куда|откуда|чей|чья)\b|"
        r"(?:ماذا|لماذا|كيف|متى|أين|كم|هل)(?:\s|$)|"
        r"(?:क्या|क्यों|कैसे|कौन|कब|कहाँ|कहां|कितना|कितनी|कितने|किसने)(?:\s|$)|"
        r"(?:kya|kyu|kyun|kaise|kaun|kab|kahan|kitna|kitni|kitne|kisne|konsa|kaunsa)\b|"
        # uk pl nl id vi
        r"(?:що|чому|навіщо|як|хто|де|коли|скільки|який|яка|яке|які|куди|звідки|чий|чия|чи)\b|"
        r"(?:co|dlaczego|czemu|jak|kto|gdzie|kiedy|ile|jaki|jaka|jakie|który|która|które|czy)\b|"
        r"(?:wat|waarom|hoe|wie|waar|wanneer|welke|welk|hoeveel)\b|"
        r"(?:apa|apakah|mengapa|kenapa|bagaimana|gimana|siapa|kapan|berapa|di\s+mana|dimana)\b|"
        r"(?:tại\s+sao|vì\s+sao|làm\s+sao|làm\s+thế\s+nào|ai|bao\s+nhiêu|khi\s+nào|ở\s+đâu)\b)",
        re.IGNORECASE,
    ),
    always="¿",
)
"""A question word (or an inverted auxiliary) at the start: a question even without "?"."""

_REQUEST_START = Gated(
    re.compile(
        r"^\W*(?:(?:please|pls|plz|kindly)\s+)?(?:"
        # asking in a statement: "I'd like to know who ...", "queria saber quem ..."
        r"(?:i'?d\s+(?:also\s+)?like\s+to\s+know|i\s+(?:also\s+)?(?:want|need)\s+to\s+know|"
        r"i\s+(?:also\s+)?wonder|(?:i'?m|i\s+am|i\s+was|just)\s+(?:also\s+)?(?:wondering|curious)|"
        r"(?:também\s+)?queria\s+saber|quero\s+saber|gostaria\s+de\s+saber|"
        r"quisiera\s+saber|quiero\s+saber|me\s+gustaría\s+saber|ich\s+möchte\s+(?:gerne\s+)?wissen|"
        r"ich\s+würde\s+gerne\s+wissen|je\s+voudrais\s+savoir|j'aimerais\s+savoir|vorrei\s+sapere|"
        r"(?:я\s+)?хочу\s+знать|хотел(?:а)?\s+бы\s+знать|merak\s+ediyorum|bilmek\s+istiyorum|"
        r"أريد\s+أن\s+أعرف|أود\s+أن\s+أعرف|जानना\s+चाहता|जानना\s+चाहती|janna\s+chahta|"
        r"janna\s+chahti)|"
        r"(?:explain|describe|list|name|give|define|compare|summari[sz]e|translate|write|calculate|compute|"
        r"find|tell|show|suggest|recommend|outline|identify|provide|convert|estimate|create|draft|generate|"
        r"propose|solve|prove|derive|predict|recommend|teach|brainstorm|compose|convert|recommend|"
        r"help|share|list|spell|pick|choose|plan|design)\b|"
        r"(?:erkläre|beschreibe|nenne|gib|übersetze|berechne|vergleiche|schreibe?|empfiehl|schlage|fasse|"
        r"liste|finde|erstelle|erzähle|definiere|sag)\b|"
        r"(?:explique|décris|nomme|donne|traduis|calcule|écris|propose|recommande|résume|définis|cite|"
        r"dis-moi|raconte)\b|"
        r"(?:explica|explícame|describe|nombra|dime|dame|escribe|traduce|calcula|recomienda|recomiéndame|"
        r"sugiéreme|escríbeme|resume|define|"
        r"enumera|sugiere|cuéntame)\b|"
        r"(?:spiega|spiegami|descrivi|dimmi|dammi|scrivi|traduci|calcola|consiglia|riassumi|definisci|"
        r"elenca|suggerisci|raccontami)\b|"
        r"(?:explique|descreva|diga|me\s+diga|dê|me\s+dê|escreva|traduza|calcule|recomende|resuma|defina|"
        r"liste|sugira|conte)\b|"
        r"(?:объясни|объясните|расскажи|расскажите|опиши|назови|напиши|переведи|посчитай|дай|скажи|"
        r"подскажи|посоветуй|перечисли|предложи|придумай)\b|"
        r"(?:اشرح|اذكر|اكتب|ترجم|أعطني|اعطني|قل\s+لي|اقترح|صف|عرّف|عرف|احسب)(?:\s|$)"
        r")",
        re.IGNORECASE,
    )
)
# verb-final imperatives: Turkish, Hindi, Hinglish
_REQUEST_END = re.compile(
    r"(?<![^\W\d_])(?:açıkla|anlat|yaz|söyle|çevir|listele|hesapla|öner|ver|tarif\s+et|açıklar\s+mısın|"
    r"बताइए|बताओ|बताएं|बताइये|समझाइए|समझाओ|लिखिए|लिखो|लिखें|सुझाइए|"
    r"batao|bataiye|bata\s+do|samjhao|samjhaiye|likho|likh\s+do|dikhao|kar\s+do|de\s+do|karo|kijiye|kariye)\W*$",
    re.IGNORECASE,
)


class _Request:
    """An imperative at the start (or, in verb-final languages, at the end): a request."""

    def match(self, text: str, pos: int = 0) -> re.Match[str] | None:
        found = _REQUEST_START.match(text, pos)
        if found is not None:
            return found
        return _REQUEST_END.search(text, max(pos, len(text) - 40))


IMPERATIVE = _REQUEST_START
"""An imperative (or "I'd like to know") at the start: where a request opens."""
REQUEST = _Request()
"""An imperative at the start (or, in verb-final languages, at the end): a request."""

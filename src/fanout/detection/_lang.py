"""The closed classes detection reads, for each language it covers.

English, German, French, Spanish (``_lang_west``), Italian, Portuguese, Turkish,
Russian, Arabic, Hindi and Hinglish (``_lang_added``) are read word by word
(``Latin``, in ``_classes``): personal pronouns and possessives, demonstratives,
articles and other determiners, the words that introduce something new ("a",
"which"), auxiliaries, the conjunctions that end a clause, dummy pronouns ("is it safe
to ...", "gibt es", "il y a"), and the nouns that name an earlier answer ("the
result"). Chinese, Japanese and Korean (``_lang_cjk``) are read with patterns over the
same classes (``Cjk``): 他/她/它/其/该/这个…, 彼/彼女/それ/その…, 그/그녀/그것/그 …, and
their ellipsis markers (上海呢？, 大阪は？, 부산은요?). Each language also lists the
instructions that make a list one task ("rank these", "the same word", "in three
parts", 排序, 並べ, 정렬) and the words that make it several ("each", 分别, それぞれ,
각각). This module tells which language a prompt is in.
"""

from __future__ import annotations

import re

from ._classes import Cjk, Latin
from ._classes import word_set as _set
from ._lang_added import AR, HI, HIEN, IT, PT, RU, TR
from ._lang_cjk import JA, KO, ZH
from ._lang_west import DE, EN, ES, FR

__all__ = [
    "CJK",
    "LATIN",
    "MATERIAL",
    "MATERIAL_COLON",
    "QUESTIONS_FOR_OTHERS",
    "UNREAD_ANAPHOR",
    "UNREAD_DROPPED",
    "UNREAD_OWN",
    "UNREAD_WORDS",
    "Cjk",
    "Latin",
    "language_of",
    "script_of",
    "unread_language",
]


LATIN = {lang.code: lang for lang in (EN, DE, FR, ES, IT, PT, TR, RU, AR, HI, HIEN)}
"""The languages read word by word: Latin script, and Cyrillic, Arabic and Devanagari."""
# Words that tell the Latin-script languages apart (with a few letters only some use).
_CUES = {
    "en": _set(
        "the is are what how why who which of and to does you your it this that was can with from "
        "have has my me we they he she his her its our these those would should could"
    ),
    "de": _set(
        "der die das ist und was wie warum wer welche ein eine nicht ich mit von zu den dem sind es er "
        "gibt diese dieser dieses diesen drei zwei für über auch noch nur bitte mir mich nach aus bei "
        "auf im vom zum zur sich sie wir uns"
    ),
    "fr": _set(
        "le les est et que qui quel quelle un une des du pourquoi comment ce dans pour il elle sont qu "
        "ces cette cet mon ma mes ta tes son sa ses au aux avec sur par mais où je nous vous leur leurs"
    ),
    "es": _set(
        "el los las es y qué cuál una por cómo del para con son quién dónde cuándo mi tu su ese esa "
        "este esta esto eso muy pero también está hay al lo estos estas mis tus sus nuestro sin sobre "
        "yo tú nosotros ellos ellas"
    ),
    "it": _set(
        "il gli è che di per non chi perché come cosa dove quale quali quanto della del dei delle "
        "sono ho ha uno questo questa anche ci ma più molto nel nella alla dal"
    ),
    "pt": _set(
        "o os as um uma é são do da dos das em no na não com para como qual quais quem onde você isso "
        "isto ele ela também muito está tem ao pelo pela meu minha seu sua"
    ),
    "tr": _set(
        "bir ve bu mı mu mü için ile nasıl neden kim nerede hangi kaç nedir var yok daha çok gibi "
        "olarak ama değil mısın misin ayrıca peki lütfen hangisi nedir neresi"
    ),
    "hi-en": _set(
        "kya hai hain kaise kaun kab kahan kyun kyu kyon ka ki ke mein aur bhi nahi nahin karo karna "
        "karte batao bataiye bhai yaar tha thi hota hoti kitna kitne kitni kisne konsa kaunsa wala wali "
        "chahiye mujhe mera meri"
    ),
}
_CUE_OF: dict[str, tuple[str, ...]] = {}
for _code, _words in _CUES.items():
    for _w in _words:
        _CUE_OF[_w] = (*_CUE_OF.get(_w, ()), _code)
# Letters (and elisions) only some of the languages use: each scores for all of them.
_MARK_OF = {
    **dict.fromkeys("äß", ("de",)),
    **dict.fromkeys("öü", ("de", "tr")),
    **dict.fromkeys("œîû", ("fr",)),
    **dict.fromkeys("èàù", ("fr", "it")),
    **dict.fromkeys("êâô", ("fr", "pt")),
    "ç": ("fr", "pt", "tr"),
    **dict.fromkeys("¿¡ñ", ("es",)),
    **dict.fromkeys("áíóú", ("es", "pt")),
    **dict.fromkeys("ãõ", ("pt",)),
    **dict.fromkeys("ğış", ("tr",)),
    **dict.fromkeys("ìò", ("it",)),
    "q'": ("fr",),
    "l'": ("fr", "it"),
    "d'": ("fr", "it"),
}
_MARKS = re.compile(r"[äöüßçèêàœùâîôû¿¡ñáíóúãõğışìò]|\b[lqd]'")


_WORD = re.compile(r"[^\W\d_]+")
_CYRILLIC = re.compile(r"[\u0400-\u04ff]")
_ARABIC = re.compile(r"[\u0600-\u06ff]")
_DEVANAGARI = re.compile(r"[\u0900-\u097f]")
_LATIN_LETTER = re.compile(r"[A-Za-z\u00c0-\u024f]")
_NOT_LATIN = re.compile(r"[\u0400-\u04ff\u0600-\u06ff\u0900-\u097f]")


def language_of(text: str) -> str:
    """The language a prompt not in Chinese, Japanese or Korean is read in: ``ru``,
    ``ar`` or ``hi`` when most of its letters are Cyrillic, Arabic or Devanagari, else
    ``en``, ``de``, ``fr``, ``es``, ``it``, ``pt``, ``tr`` or ``hi-en`` (Hindi in Latin
    letters) from its function words and letters (``en`` when unsure)."""
    head = text[:400]
    if not head.isascii() and _NOT_LATIN.search(head):
        latin = len(_LATIN_LETTER.findall(head))
        for script, code in ((_CYRILLIC, "ru"), (_ARABIC, "ar"), (_DEVANAGARI, "hi")):
            if len(script.findall(head)) > latin:
                return code
    lowered = head.lower()
    scores = dict.fromkeys(_CUES, 0)
    for word in set(_WORD.findall(lowered)):
        for code in _CUE_OF.get(word, ()):
            scores[code] += 1
    for mark in _MARKS.findall(lowered):
        codes = _MARK_OF.get(mark, ("fr",))
        for code in codes:
            scores[code] += 2 if len(codes) == 1 else 1
    best = max(scores, key=lambda c: (scores[c], c == "en"))
    return best if scores[best] > 0 else "en"


_HANGUL = re.compile(r"[\uac00-\ud7af]")
_KANA = re.compile(r"[\u3040-\u30ff]")
_HAN = re.compile(r"[\u3400-\u9fff]")


def script_of(text: str) -> str | None:
    """``ko``, ``ja`` or ``zh`` when the text is written in that script, else None."""
    if text.isascii():
        return None
    if _HANGUL.search(text):
        return "ko"
    if _KANA.search(text):
        return "ja"
    if _HAN.search(text):
        return "zh"
    return None


CJK = {lang.code: lang for lang in (ZH, JA, KO)}

# A request that ends in a colon and works on what follows as text ("Translate into
# French: Where is the station? ..."): in any language.
MATERIAL_COLON = re.compile(
    r"^\W*(?:please\s+|pls\s+|bitte\s+|por\s+favor,?\s+)?(?:translate|rewrite|rephrase|paraphrase|"
    r"reword|proofread|correct|fix|improve|summari[sz]e|shorten|simplify|check|grade|edit|polish|"
    r"critique|review|rate|evaluate|assess|übersetze|korrigiere|verbessere|formuliere|traduis|traduisez|corrige|"
    r"reformule|traduce|traduzca|corrige|reescribe|traduci|correggi|riscrivi|traduza|corrija|"
    r"reescreva|переведи|исправь|перепиши|перефразируй|çevir|düzelt|ترجم|صحح|अनुवाद|translate\s+karo|"
    r"翻译|翻譯|改写|润色|翻訳|번역)[^\n]{0,60}[:：]\s*$|(?:を|に)(?:翻訳|訳)して(?:ください)?[:：。]\s*$|"
    r"(?:로|으로)\s*번역해\s*(?:주세요|줘)?[:：.]?\s*$|[^\n]{0,30}(?:çevir|अनुवाद\s+करें|अनुवाद\s+कीजिए)[:：]\s*$",
    re.IGNORECASE | re.MULTILINE,
)

# Questions written for someone else to be asked (an interview's, a quiz's, "the
# questions I plan to ask"): the material of one request, not questions to answer.
QUESTIONS_FOR_OTHERS = re.compile(
    r"\b(?:interview|quiz|trivia|survey|questionnaire|exam)\s+questions\b|"
    r"\bquestions\s+(?:that\s+)?(?:i|we)(?:'m|\s+am|\s+are)?\s+(?:plan(?:ning)?|want|going|intend|"
    r"would\s+like|will|need)\s+to\s+(?:ask|use|put|send|include)\b|"
    r"\bquestions\s+que\s+(?:je|nous)\s+(?:compte|vais|veux|voudrais|pense|souhaite)\w*\s+poser\b|"
    r"\bquestions\s+d'entretien\b|\bpreguntas\s+que\s+(?:voy\s+a|pienso|quiero|planeo)\s+hacer\b|"
    r"\bpreguntas\s+(?:de|para)\s+(?:la\s+|mi\s+|el\s+)?(?:entrevista|examen|encuesta)\b|"
    r"\bFragen,?\s+die\s+ich\b[^.?!\n]{0,40}\bstellen\b|\b(?:Interview|Quiz|Prüfungs)fragen\b|"
    r"\bdomande\s+(?:che\s+(?:voglio|vorrei|penso\s+di)\s+fare|del\s+colloquio)\b|"
    r"\bperguntas\s+(?:que\s+(?:vou|quero|pretendo)\s+fazer|da\s+entrevista)\b|"
    # questions others ask the speaker: "the questions I got in my interview", "las preguntas
    # que creo que me harán", "Fragen, die man mir stellen wird"
    r"\bquestions\s+(?:that\s+)?(?:i|we)\s+(?:got|get|was\s+asked|were\s+asked|expect|might\s+get|"
    r"(?:may|might|could|will)\s+be\s+asked|think\s+(?:they'?ll|they\s+will)\s+ask)\b"
    r"[^.?!\n]{0,40}\b(?:interview|round|screening|recruiter|hiring|panel)|"
    r"\bquestions\s+(?:they|the\s+\w+)\s+(?:asked|will\s+ask|might\s+ask|may\s+ask)\s+me\b|"
    r"\bpreguntas\s+que\s+(?:creo\s+que\s+|pienso\s+que\s+|seguro\s+que\s+)?me\s+(?:harán|van\s+a\s+hacer|"
    r"hicieron|pueden\s+hacer|podrían\s+hacer)\b|\bFragen,?\s+die\s+(?:man|sie)\s+mir\b|"
    r"\bquestions\s+qu'(?:on|ils|elles)\s+(?:va|vont|m'a|m'ont|pourrait|pourraient)\b|"
    r"\bdomande\s+che\s+mi\s+(?:faranno|hanno\s+fatto|potrebbero\s+fare)\b|"
    r"\bperguntas\s+que\s+(?:acho\s+que\s+)?(?:vão\s+me\s+fazer|me\s+(?:fizeram|farão))\b",
    re.IGNORECASE,
)

# An instruction that treats the items as text to work on (rewrite, translate, correct
# them): the items are material, not questions to answer.
MATERIAL = {
    "en": re.compile(
        r"\b(?:rewrite|rephrase|paraphrase|reword|translate|proofread|correct|edit|polish|shorten|improve|"
        r"make|critique|review|grade|rate|simplify|fix|reformulate)\b"
        r"[^.?!\n]{0,30}\b(?:these|those|them|the following|the questions|each|all)\b|"
        r"\b(?:write|create|make|build|turn|design|prepare|draft|generate|compose)\b[^.?!\n]{0,30}"
        r"\b(?:quiz|test|exam|faq|worksheet|survey|questionnaire|flashcards?|trivia game|interview)\b",
        re.IGNORECASE,
    ),
    "de": re.compile(
        r"\b(?:übersetze|formuliere|korrigiere|überarbeite|verbessere|kürze)\b[^.?!\n]{0,30}"
        r"\b(?:diese|die folgenden|sie|alle)\b",
        re.IGNORECASE,
    ),
    "fr": re.compile(
        r"\b(?:traduis|traduisez|reformule|reformulez|corrige|corrigez|réécris|réécrivez)\b"
        r"[^.?!\n]{0,30}\b(?:ces|les suivantes|-les|toutes)\b",
        re.IGNORECASE,
    ),
    "es": re.compile(
        r"\b(?:traduce|traduzca|reformula|corrige|reescribe|mejora)\b[^.?!\n]{0,30}"
        r"\b(?:estas|estos|las siguientes|los siguientes|todas|todos)\b",
        re.IGNORECASE,
    ),
    "zh": re.compile(
        r"(?:翻译|翻譯|改写|润色|修改|纠正|改成)[^。？?！!\n]{0,10}(?:以下|下面|这些|下列)|(?:把|将)(?:以下|下面|这些)"
    ),
    "ja": re.compile(
        r"(?:以下|次|これら)の(?:質問|文|文章)?を[^。？?\n]{0,15}(?:翻訳|書き直|言い換え|添削|直して)"
    ),
    "ko": re.compile(
        r"(?:다음|아래|이)\s?(?:질문|문장)(?:들)?을\s?[^.?!\n]{0,15}(?:번역|다시 써|고쳐|바꿔|수정)"
    ),
    "it": re.compile(
        r"\b(?:traduci|riformula|correggi|riscrivi|migliora)\b[^.?!\n]{0,30}\b(?:queste|questi|le seguenti|"
        r"tutte)\b",
        re.IGNORECASE,
    ),
    "pt": re.compile(
        r"\b(?:traduza|traduz|reformule|corrija|reescreva|melhore)\b[^.?!\n]{0,30}\b(?:estas|estes|"
        r"as seguintes|os seguintes|todas)\b",
        re.IGNORECASE,
    ),
    "tr": re.compile(
        r"(?:aşağıdaki|bu) (?:soruları|cümleleri)[^.?!\n]{0,30}(?:çevir|düzelt|yeniden yaz)"
    ),
    "ru": re.compile(
        r"(?:переведи|перефразируй|исправь|перепиши|улучши)[^.?!\n]{0,30}(?:эти|следующие|все)",
        re.IGNORECASE,
    ),
    "ar": re.compile(r"(?:ترجم|أعد صياغة|صحح|حسّن)[^.؟?!\n]{0,30}(?:هذه|التالية)"),
    "hi": re.compile(
        r"(?:इन|निम्नलिखित) (?:प्रश्नों|सवालों|वाक्यों) (?:का|को)[^।?!\n]{0,30}(?:अनुवाद|सुधार)"
    ),
    "hi-en": re.compile(
        r"\b(?:translate|rewrite|correct|improve)\b[^.?!\n]{0,30}\b(?:these|in|ye|inko)\b",
        re.IGNORECASE,
    ),
}


# --- languages not read word by word: Polish, Ukrainian, Dutch, Indonesian, Vietnamese ---
# language_of reads them as another language (Polish and Indonesian as English, Dutch as
# German, Ukrainian as Russian, Vietnamese as Italian), whose pronouns are not theirs. What
# tells each apart, and the words in it that point at an earlier part.
UNREAD_WORDS = {
    "pl": _set(
        "jest czy się jak kto gdzie kiedy ile dlaczego który która które nie jaki jaka jakie"
    ),
    "nl": _set(
        "het een hoe waar waarom wanneer welke welk heeft niet ook wordt werd hij zij ik heb wat "
        "zijn van jij je mijn kan wie"
    ),
    "id": _set(
        "apa siapa bagaimana gimana berapa kapan mengapa kenapa yang adalah ini itu dan di ke dari "
        "untuk dengan ada tidak bisa"
    ),
}
_UKRAINIAN = re.compile(r"[іїєґІЇЄҐ]")
_POLISH = re.compile(r"[ąęłśźżńćĄĘŁŚŹŻŃĆ]")
_VIETNAMESE = re.compile(r"[ăđơưạảấầẩẫậắằẳẵặẹẻẽếềểễệỉịọỏốồổỗộớờởỡợụủứừửữựỳỵỷỹ]", re.IGNORECASE)
UNREAD_ANAPHOR = {
    # he, she, it, they, him, her, them, his, there, then, this/that (one)
    "pl": re.compile(
        # "A kto był królem strzelców?": "and who ...", of the question before, naming nothing
        r"^\W*a(?=\s)(?![^?]*\s(?-i:[A-ZĄĆĘŁŃÓŚŹŻ\d]))|"
        r"(?<!\w)(?:on|ona|ono|oni|one|go|jego|jej|ich|jemu|mu|nim|niej|nich|niego|nią|tam|wtedy|"
        r"ten|ta|te|tego|tej|tym|tych|tamten|"
        # "to" before an impersonal past ("W którym roku to wydano?"): "it", the thing before
        r"(?<!co\s)to(?=\s+(?:był|była|było|jest)\b|\s+\w+(?:ano|ono|ęto|yto|ito)\b|\W*$))(?!\w)",
        re.IGNORECASE,
    ),
    "uk": re.compile(
        r"(?<!\w)(?:він|вона|воно|вони|його|її|їх|йому|їй|ним|нею|ними|нього|неї|них|там|тоді|"
        r"цей|ця|це|ці|цього|цієї|той|ті|того|тієї)(?!\w)",
        re.IGNORECASE,
    ),
    "nl": re.compile(
        r"(?<!\w)(?:hij|zij|ze|hem|haar|hun|hen|die|deze|dit|daar\w*|toen|dat(?=\W*$))(?!\w)",
        re.IGNORECASE,
    ),
    "id": re.compile(
        r"(?<!\w)(?:dia|ia|beliau|mereka|sana|tersebut|(?<!apa\s)itu|ini)(?!\w)|"
        r"[^\W\d_]{3,}nya\W*$",  # "berapa harganya?": -nya on the last word, its owner unsaid
        re.IGNORECASE,
    ),
    "vi": re.compile(
        r"(?<!\w)(?:(?:ông|bà|anh|cô|chị|em)\s+ấy|nó|họ|đó|này|kia|lúc\s+đó|khi\s+đó|ở\s+đó)(?!\w)",
        re.IGNORECASE,
    ),
}


def unread_language(text: str) -> str | None:
    """Which of Polish, Ukrainian, Dutch, Indonesian and Vietnamese ``text`` is in (their
    letters, or two of their function words), or None."""
    if _UKRAINIAN.search(text):
        return "uk"
    if _VIETNAMESE.search(text):
        return "vi"
    found = set(_WORD.findall(text.lower()))
    best = max(UNREAD_WORDS, key=lambda code: len(found & UNREAD_WORDS[code]))
    if _POLISH.search(text) and len(found & UNREAD_WORDS["pl"]):
        return "pl"
    return best if len(found & UNREAD_WORDS[best]) >= 2 else None


UNREAD_DROPPED = {
    "pl": re.compile(
        r"^\W*(?:\S+\s+){0,3}[^\W\d_]+(?:ł|ła|ło|li|ły|ć|c)[^\w\x00]*$|"
        r"^\W*(?!(?:\S+\s+){0,2}\S*(?:ć|c)\b)\S+(?-i:(?![^?]*[A-ZĄĆĘŁŃÓŚŹŻ\d\x00]))(?:\s+\S+){0,2}\s*\?\W*$",
        re.IGNORECASE,
    ),
    "uk": re.compile(
        r"^\W*(?:\S+\s+){0,3}[^\W\d_]+(?:в|ла|ло|ли|ти)(?:ся|сь)?[^\w\x00]*$|"
        r"^\W*(?!(?:\S+\s+){0,2}\S*ти\b)\S+(?-i:(?![^?]*[А-ЯЄІЇҐ\d\x00]))(?:\s+\S+){0,2}\s*\?\W*$",
        re.IGNORECASE,
    ),
}
"""Where Polish and Ukrainian drop the subject: a short question ending in a past-tense
verb or an infinitive ("Kiedy się urodził?", "Jakiej mąki użyć?", "Коли народився?"), or
a question of three words with no infinitive and no name ("Ile ma lat?"); not "Jak
ugotować bigos?" or a listed "kto napisał Krzyżaków"."""
UNREAD_OWN = {
    code: re.compile(rf"(?<!\w)(?:{words_})(?!\w)", re.IGNORECASE)
    for code, words_ in {
        "pl": r"ja|mój|moja|moje|moi|mi|mnie|mną|nasz\w*|powinienem|powinnam|powinn\w+|warto|"
        r"polecasz|polecisz|poleci\w*|muszę|trzeba|radzisz|doradzisz",
        "uk": r"я|мені|мене|мій|моя|моє|мої|наш\w*|варто|треба|потрібно|порадь\w*|радиш|рекоменд\w*",
        "nl": r"ik|mijn|me|mij|wij|we|ons|onze|moet|moeten|zou|zouden|raad|aanraden|aanrader|waard|"
        r"beter",
        "id": r"saya|aku|gue|gua|kami|kita|harus|sebaiknya|perlu|rekomendasi|saran|sarankan|layak",
        "vi": r"tôi|mình|em|tớ|chúng\s+tôi|nên|khuyên|đáng|tốt\s+hơn",
    }.items()
}
"""Words that make two questions the speaker's own matter (I, my, should, recommend,
worth) in the languages not read word by word, as ``_prose._OWN`` and ``_ADVICE`` do
in the languages it reads."""
